import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Where a contender's CPU goes: `node bench/dist/bench/profile-summary.js <dir>` reads the `.cpuprofile` files that
 * `npm run bench -- --cpu-prof <contender>` leaves in bench/dist/profiles (one per thread: the main thread runs
 * activities and the SDK, a worker thread runs workflow code) and prints self time by area and the top functions.
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Areas by the file a function comes from, first match wins. */
const AREAS: [string, (url: string, name: string) => boolean][] = [
  ['idle', (_url, name) => name === '(idle)'],
  ['garbage collection', (_url, name) => name === '(garbage collector)'],
  ['native / program', (_url, name) => name === '(program)' || name === '(root)'],
  [
    'bundling workflow code (start-up)',
    (url) =>
      /node_modules\/(webpack|@swc|swc-loader|memfs|unionfs|@jsonjoy|enhanced-resolve|terser|acorn|watchpack|schema-utils|ajv)/.test(
        url,
      ),
  ],
  ['workflow code (sandbox bundle)', (url) => url.includes('workflow-bundle') || url.startsWith('evalmachine')],
  ['payload conversion, protobuf', (url) => /@temporalio\/(common|proto)|protobufjs|long\//.test(url)],
  ['Temporal worker (SDK)', (url) => url.includes('@temporalio/')],
  ['openai client', (url) => url.includes('/openai/')],
  ['MCP client', (url) => url.includes('@modelcontextprotocol')],
  ['durable-agent (src)', (url) => url.includes('/dist/src/')],
  ['benchmark harness', (url) => url.includes('/dist/bench/')],
  ['node internals (http, streams, timers)', (url) => url.startsWith('node:')],
  ['other dependencies', (url) => url.includes('node_modules')],
  ['other', () => true],
];

function areaOf(node: ProfileNode): string {
  const { url, functionName } = node.callFrame;
  return AREAS.find(([, matches]) => matches(url, functionName))![0];
}

function summarise(file: string): string {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, index) => {
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0));
  });
  const areas = new Map<string, number>();
  const functions = new Map<string, number>();
  let busy = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id)!;
    const area = areaOf(node);
    areas.set(area, (areas.get(area) ?? 0) + us);
    if (area !== 'idle') busy += us;
    const { functionName, url, lineNumber } = node.callFrame;
    const key = `${functionName || '(anonymous)'} ${url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/dist\//, 'dist/')}:${lineNumber + 1}`;
    if (area !== 'idle') functions.set(key, (functions.get(key) ?? 0) + us);
  }
  const ms = (us: number) => (us / 1000).toFixed(0).padStart(7);
  const share = (us: number) => `${((100 * us) / Math.max(busy, 1)).toFixed(1).padStart(5)}%`;
  const lines = [`${path.basename(file)}: ${(busy / 1000).toFixed(0)} ms busy`];
  for (const [area, us] of [...areas].sort((a, b) => b[1] - a[1])) {
    lines.push(`  ${ms(us)} ms ${area === 'idle' ? '      ' : share(us)}  ${area}`);
  }
  lines.push('  top functions (self time):');
  for (const [name, us] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, 20)) {
    lines.push(`  ${ms(us)} ms ${share(us)}  ${name}`);
  }
  return lines.join('\n');
}

const directory = process.argv[2] ?? 'bench/dist/profiles';
const files = readdirSync(directory).filter((name) => name.endsWith('.cpuprofile'));
if (files.length === 0) {
  process.stderr.write(
    `No .cpuprofile files in ${directory}: run \`npm run bench -- --cpu-prof <contender>\` first.\n`,
  );
  process.exitCode = 1;
}
for (const name of files) process.stdout.write(`${summarise(path.join(directory, name))}\n\n`);
