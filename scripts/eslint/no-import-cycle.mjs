import fs from 'node:fs';
import path from 'node:path';

/**
 * An ESLint rule: no import cycles between the project's own modules, counting `import type` too (a type-only cycle
 * still says that two modules are one idea, or that a type lives in the wrong place). eslint-plugin-import's no-cycle
 * skips type imports, so this rule reads the relative imports itself. Each file's imports are read once per process.
 */
const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+'(\.{1,2}\/[^']+)'/g;
const importsOf = new Map();

function resolve(fromFile, specifier) {
  const target = path.resolve(path.dirname(fromFile), specifier);
  for (const candidate of [target.replace(/\.js$/, '.ts'), `${target}.ts`, path.join(target, 'index.ts')]) {
    if (fs.existsSync(candidate)) return candidate;
  }
  return undefined;
}

function imports(file) {
  let found = importsOf.get(file);
  if (found === undefined) {
    const source = fs.readFileSync(file, 'utf8');
    found = [...source.matchAll(IMPORT)].map((match) => resolve(file, match[1])).filter(Boolean);
    importsOf.set(file, found);
  }
  return found;
}

/** A path of imports from `start` back to `start`, or undefined. */
function cycleThrough(start) {
  const visited = new Set();
  const walk = (file, trail) => {
    for (const next of imports(file)) {
      if (next === start) return [...trail, next];
      if (visited.has(next)) continue;
      visited.add(next);
      const cycle = walk(next, [...trail, next]);
      if (cycle) return cycle;
    }
    return undefined;
  };
  return walk(start, [start]);
}

export const noImportCycle = {
  meta: {
    type: 'problem',
    docs: { description: 'Disallow import cycles between modules, type-only imports included.' },
    schema: [],
  },
  create(context) {
    return {
      Program(node) {
        const file = context.filename;
        const cycle = cycleThrough(file);
        if (!cycle) return;
        const trail = cycle.map((entry) => path.relative(context.cwd, entry)).join(' -> ');
        context.report({ node, message: `Import cycle: ${trail}. Move what both need into a module of its own.` });
      },
    };
  },
};
