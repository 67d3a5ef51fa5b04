import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { toolResultToText } from '../../src/worker/mcp/content.js';
import type { McpPool, McpToolTarget } from '../../src/worker/mcp/pool.js';
import type { JsonObject } from '../../src/shared/types.js';
import {
  freePort,
  httpServer,
  mcpTool,
  publishedServerEntry,
  resultText,
  stdioServer,
  useProcesses,
  usePools,
  useTemporaryDirectories,
  waitForHttp,
} from './helpers.js';

/** The published reference servers, unmodified, through the pool. */

const createPool = usePools();
const temporaryDirectory = useTemporaryDirectories();
const startProcess = useProcesses();

const modelText = async (pool: McpPool, tool: McpToolTarget, args: JsonObject = {}) =>
  toolResultToText(await pool.callTool(tool, args)).text;

describe('@modelcontextprotocol/server-everything over stdio', () => {
  const everything = () =>
    stdioServer('everything', process.execPath, [publishedServerEntry('server-everything'), 'stdio']);

  test('lists its tools namespaced, with annotations, and answers calls from one process', async () => {
    const pool = createPool([everything()]);
    const { tools } = await pool.listTools();
    expect(tools.find((tool) => tool.name === 'everything__get-sum')).toMatchObject({
      originalName: 'get-sum',
      annotations: { readOnlyHint: true },
      inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
    });
    const pid = pool.status()[0]?.pid;
    for (let index = 0; index < 5; index += 1) {
      expect(await modelText(pool, mcpTool('everything', 'get-sum'), { a: index, b: 3 })).toBe(
        `The sum of ${index} and 3 is ${index + 3}.`,
      );
    }
    expect(pool.status()[0]).toMatchObject({ connects: 1, pid });
  });

  test('content conversion: image placeholder, embedded resource inline, resource links, structured content once', async () => {
    const pool = createPool([everything()]);
    const image = await modelText(pool, mcpTool('everything', 'get-tiny-image'));
    expect(image).toMatch(/\[image: image\/png, [\d.]+ (bytes|KiB), not shown\]/);
    expect(image).not.toMatch(/iVBOR/);

    const reference = await modelText(pool, mcpTool('everything', 'get-resource-reference'), {
      resourceType: 'Text',
      resourceId: 2,
    });
    expect(reference).toMatch(/\[resource: demo:\/\/resource\/dynamic\/text\/2 \(text\/plain\)\]\nResource 2: /);

    const links = await modelText(pool, mcpTool('everything', 'get-resource-links'), { count: 2 });
    expect(links).toContain('[resource link: Text Resource 2 <demo://resource/dynamic/text/2> (text/plain)');

    const structured = await modelText(pool, mcpTool('everything', 'get-structured-content'), { location: 'New York' });
    expect(JSON.parse(structured)).toMatchObject({ temperature: expect.any(Number) });
  });

  test('progress notifications of a long-running operation reach onProgress', async () => {
    const pool = createPool([everything()]);
    const updates: number[] = [];
    const result = await pool.callTool(
      mcpTool('everything', 'trigger-long-running-operation'),
      { duration: 1, steps: 4 },
      { onProgress: (update) => updates.push(update.progress) },
    );
    expect(resultText(result)).toContain('Long running operation completed');
    expect(updates.slice(0, 3)).toEqual([1, 2, 3]);
  });

  test("the server gets only the configured env and a few safe variables, not the worker's secrets", async () => {
    process.env.DURABLE_AGENT_TEST_SECRET = 'must-not-leak';
    try {
      const pool = createPool([
        stdioServer('everything', process.execPath, [publishedServerEntry('server-everything'), 'stdio'], {
          env: { GIVEN_TO_SERVER: 'yes' },
        }),
      ]);
      const environment = JSON.parse(resultText(await pool.callTool(mcpTool('everything', 'get-env'), {}))) as Record<
        string,
        string
      >;
      expect(environment.GIVEN_TO_SERVER).toBe('yes');
      expect(environment.PATH).toBeDefined();
      expect(environment.DURABLE_AGENT_TEST_SECRET).toBeUndefined();
    } finally {
      delete process.env.DURABLE_AGENT_TEST_SECRET;
    }
  });
});

describe('@modelcontextprotocol/server-everything over Streamable HTTP', () => {
  let port: number;
  let server: ChildProcess;
  const start = async () => {
    server = startProcess(process.execPath, [publishedServerEntry('server-everything'), 'streamableHttp'], {
      PORT: String(port),
    });
    await waitForHttp(`http://127.0.0.1:${port}/mcp`);
  };

  beforeAll(async () => {
    port = await freePort();
    await start();
  });
  afterAll(() => {
    server.kill('SIGKILL');
  });

  test('calls share one session', async () => {
    const pool = createPool([httpServer('everything', `http://127.0.0.1:${port}/mcp`)]);
    expect((await pool.listTools()).tools.map((tool) => tool.name)).toContain('everything__echo');
    const session = pool.status()[0]?.sessionId;
    expect(session).toBeDefined();
    for (let index = 0; index < 5; index += 1) {
      expect(resultText(await pool.callTool(mcpTool('everything', 'echo'), { message: `hi ${index}` }))).toBe(
        `Echo: hi ${index}`,
      );
    }
    expect(pool.status()[0]).toMatchObject({ connects: 1, sessionId: session });
  });

  test('after the server restarts (its sessions are gone), the pool opens a new session by itself', async () => {
    const pool = createPool([httpServer('everything', `http://127.0.0.1:${port}/mcp`)]);
    await pool.callTool(mcpTool('everything', 'echo'), { message: 'before' });
    const firstSession = pool.status()[0]?.sessionId;

    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGKILL');
    await exited;
    await start();

    expect(resultText(await pool.callTool(mcpTool('everything', 'echo'), { message: 'after' }))).toBe('Echo: after');
    expect(pool.status()[0]?.sessionId).not.toBe(firstSession);
    expect(pool.status()[0]?.connects).toBe(2);
  });
});

describe('@modelcontextprotocol/server-filesystem', () => {
  test('reads and writes files in the allowed directory; a path outside it is an error result', async () => {
    const directory = temporaryDirectory();
    writeFileSync(path.join(directory, 'notes.txt'), 'first line\n');
    const pool = createPool([
      stdioServer('files', process.execPath, [publishedServerEntry('server-filesystem'), directory]),
    ]);
    const tools = new Map((await pool.listTools()).tools.map((tool) => [tool.name, tool]));
    expect(tools.get('files__read_text_file')?.annotations.readOnlyHint).toBe(true);
    expect(tools.get('files__write_file')?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });

    // The file's text once, although the server also sends it as structured content.
    expect(await modelText(pool, mcpTool('files', 'read_text_file'), { path: path.join(directory, 'notes.txt') })).toBe(
      'first line\n',
    );
    await pool.callTool(mcpTool('files', 'write_file'), {
      path: path.join(directory, 'new.txt'),
      content: 'written by a tool',
    });
    expect(readFileSync(path.join(directory, 'new.txt'), 'utf8')).toBe('written by a tool');

    const outside = await pool.callTool(mcpTool('files', 'read_text_file'), { path: '/etc/hostname' });
    expect(outside.isError).toBe(true);
    expect(resultText(outside)).toContain('Access denied');
  });

  test('allowTools limits the model to reading', async () => {
    const directory = temporaryDirectory();
    const pool = createPool([
      stdioServer('files', process.execPath, [publishedServerEntry('server-filesystem'), directory], {
        allowTools: ['read_*', 'list_*'],
        denyTools: ['read_media_file'],
      }),
    ]);
    const names = (await pool.listTools()).tools.map((tool) => tool.name).sort();
    expect(names).toEqual([
      'files__list_allowed_directories',
      'files__list_directory',
      'files__list_directory_with_sizes',
      'files__read_file',
      'files__read_multiple_files',
      'files__read_text_file',
    ]);
  });
});

describe('@modelcontextprotocol/server-memory', () => {
  test('creates entities and reads them back from the graph file given by MEMORY_FILE_PATH', async () => {
    const memoryFile = path.join(temporaryDirectory(), 'memory.jsonl');
    const pool = createPool([
      stdioServer('memory', process.execPath, [publishedServerEntry('server-memory')], {
        env: { MEMORY_FILE_PATH: memoryFile },
      }),
    ]);
    await pool.callTool(mcpTool('memory', 'create_entities'), {
      entities: [{ name: 'Ada', entityType: 'person', observations: ['wrote the first program'] }],
    });
    const graph = JSON.parse(resultText(await pool.callTool(mcpTool('memory', 'read_graph'), {}))) as {
      entities: Array<{ name: string }>;
    };
    expect(graph.entities.map((entity) => entity.name)).toEqual(['Ada']);
    expect(readFileSync(memoryFile, 'utf8')).toContain('wrote the first program');
  });
});
