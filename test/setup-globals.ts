import { afterAll } from 'vitest';

/**
 * A test file shares its process with the files before and after it (vitest.config.ts, `isolate: false`), so a file
 * that leaves one of Node's fetch classes replaced breaks a later one, far from its cause: `@hono/node-server` replaces
 * `Request` and `Response` unless told `overrideGlobalObjects: false`, and a refused OAuth client then reads
 * "[object Response]". Node's own classes are kept when the process loads this file first; a file that leaves others
 * in their place fails, naming them.
 */
const NODE_FETCH_CLASSES = ['Request', 'Response', 'Headers', 'fetch'] as const;
type FetchGlobals = Record<(typeof NODE_FETCH_CLASSES)[number], unknown>;
const key = Symbol.for('durable-agent.test.node-fetch-globals');
const store = globalThis as unknown as Record<symbol, FetchGlobals | undefined>;
const node: FetchGlobals = (store[key] ??= Object.fromEntries(
  NODE_FETCH_CLASSES.map((name) => [name, globalThis[name]]),
) as FetchGlobals);

afterAll(() => {
  const replaced = NODE_FETCH_CLASSES.filter((name) => globalThis[name] !== node[name]);
  if (replaced.length === 0) return;
  for (const name of replaced) Object.assign(globalThis, { [name]: node[name] });
  throw new Error(
    `This test file left globalThis.${replaced.join(', ')} replaced (restored now): the files after it in this process ` +
      'would see them. An @hono/node-server listener needs { overrideGlobalObjects: false }.',
  );
});
