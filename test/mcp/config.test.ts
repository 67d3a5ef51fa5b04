import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import {
  DEFAULT_TOOL_TIMEOUT_MS,
  isToolAllowed,
  loadMcpConfig,
  McpConfigError,
  parseMcpConfig,
} from '../../src/worker/mcp/config.js';

const FILE = '/etc/durable-agent/mcp.json';

function parse(mcpServers: unknown, env: Record<string, string> = {}) {
  return parseMcpConfig(JSON.stringify({ mcpServers }), FILE, env);
}

function parseError(mcpServers: unknown, env: Record<string, string> = {}): McpConfigError {
  try {
    parse(mcpServers, env);
  } catch (error) {
    expect(error).toBeInstanceOf(McpConfigError);
    return error as McpConfigError;
  }
  throw new Error('expected an McpConfigError');
}

describe('mcp config', () => {
  test('reads stdio and HTTP servers in the desktop mcpServers shape, with defaults', () => {
    const config = parse({
      files: { command: 'npx', args: ['-y', 'server-filesystem', '/data'], env: { DEBUG: '1' } },
      search: { url: 'https://search.example.com/mcp', headers: { 'X-Team': 'agents' } },
    });
    expect(config.file).toBe(FILE);
    expect(config.servers).toEqual([
      {
        name: 'files',
        transport: 'stdio',
        command: 'npx',
        commandAsWritten: 'npx',
        args: ['-y', 'server-filesystem', '/data'],
        env: { DEBUG: '1' },
        cwd: undefined,
        allowTools: undefined,
        denyTools: [],
        timeoutMs: DEFAULT_TOOL_TIMEOUT_MS,
        disabled: false,
        variables: {},
      },
      {
        name: 'search',
        transport: 'http',
        url: 'https://search.example.com/mcp',
        urlAsWritten: 'https://search.example.com/mcp',
        headers: { 'X-Team': 'agents' },
        allowTools: undefined,
        denyTools: [],
        timeoutMs: DEFAULT_TOOL_TIMEOUT_MS,
        disabled: false,
        variables: {},
      },
    ]);
  });

  test('expands ${VAR} from the worker environment in args, env, cwd, url and headers', () => {
    const env = { TOKEN: 's3cret', ROOT: '/srv', HOST: 'mcp.internal' };
    const config = parse(
      {
        local: { command: 'server', args: ['--root', '${ROOT}/data'], env: { API_TOKEN: '${TOKEN}' }, cwd: '${ROOT}' },
        remote: { url: 'https://${HOST}/mcp', headers: { Authorization: 'Bearer ${TOKEN}' } },
      },
      env,
    );
    expect(config.servers[0]).toMatchObject({
      args: ['--root', '/srv/data'],
      env: { API_TOKEN: 's3cret' },
      cwd: '/srv',
    });
    expect(config.servers[1]).toMatchObject({
      url: 'https://mcp.internal/mcp',
      headers: { Authorization: 'Bearer s3cret' },
    });
    // What the pool quotes and redacts (src/worker/mcp/redaction.ts): the text as written, and the values that were expanded.
    expect(config.servers[0]).toMatchObject({
      commandAsWritten: 'server',
      variables: { ROOT: '/srv', TOKEN: 's3cret' },
    });
    expect(config.servers[1]).toMatchObject({
      urlAsWritten: 'https://${HOST}/mcp',
      variables: { HOST: 'mcp.internal', TOKEN: 's3cret' },
    });
  });

  test('expansion: ${VAR:-fallback} covers unset and empty variables, and $$ is a literal dollar', () => {
    const config = parse(
      { local: { command: 'server', args: ['${LEVEL:-info}', '${EMPTY:-x}', 'cost$$5'] } },
      { EMPTY: '' },
    );
    expect(config.servers[0]).toMatchObject({ args: ['info', 'x', 'cost$5'] });
  });

  test('a missing variable is an error naming the file, the server, the key and the variable', () => {
    const error = parseError({
      remote: { url: 'https://x/mcp', headers: { Authorization: 'Bearer ${GITHUB_TOKEN}' } },
    });
    expect(error.message).toContain(FILE);
    expect(error.message).toContain('server "remote"');
    expect(error.message).toContain('key "headers.Authorization"');
    expect(error.message).toContain('GITHUB_TOKEN is not set');
  });

  test('a relative cwd is resolved against the directory of the config file', () => {
    const config = parse({ local: { command: 'server', cwd: 'servers/local' } });
    expect(config.servers[0]).toMatchObject({ cwd: '/etc/durable-agent/servers/local' });
  });

  test('allowTools, denyTools, timeoutMs and disabled are read per server', () => {
    const config = parse({
      files: {
        command: 'x',
        allowTools: ['read_*', 'list_directory'],
        denyTools: ['read_media_file'],
        timeoutMs: 5000,
      },
      off: { command: 'y', disabled: true },
    });
    expect(config.servers[0]).toMatchObject({
      allowTools: ['read_*', 'list_directory'],
      denyTools: ['read_media_file'],
      timeoutMs: 5000,
    });
    expect(config.servers[1]).toMatchObject({ disabled: true });
  });

  test('elicitationTimeoutMs is read per server, and absent when not given (the default applies)', () => {
    const config = parse({ asks: { command: 'x', elicitationTimeoutMs: 120_000 }, plain: { command: 'y' } });
    expect(config.servers[0]).toMatchObject({ elicitationTimeoutMs: 120_000 });
    expect(config.servers[1]).not.toHaveProperty('elicitationTimeoutMs');
  });

  test('protocolVersion pins a revision per server, stdio or HTTP, and is absent when not given (chosen per transport)', () => {
    const config = parse({
      pinned: { command: 'python', protocolVersion: '2026-07-28' },
      remote: { url: 'https://crm.example.com/mcp', protocolVersion: '2025-11-25' },
      plain: { command: 'y' },
    });
    expect(config.servers[0]).toMatchObject({ protocolVersion: '2026-07-28' });
    expect(config.servers[1]).toMatchObject({ protocolVersion: '2025-11-25' });
    expect(config.servers[2]).not.toHaveProperty('protocolVersion');
  });

  test.each([
    ['2026-07', 'string "2026-07"'],
    ['latest', 'string "latest"'],
    [20261128, 'number 20261128'],
    [null, 'null'],
  ])('protocolVersion %j is an error naming the file, the server, the key and the revisions allowed', (value, got) => {
    expect(parseError({ py: { command: 'python', protocolVersion: value } }).message).toBe(
      `${FILE}: server "py" key "protocolVersion": expected "2025-11-25" or "2026-07-28", got ${got}. ` +
        'Leave it out to let durable-agent choose (docs/mcp.md, "Protocol versions").',
    );
  });

  test('isToolAllowed: allowTools keeps only matching tools, denyTools removes tools after that', () => {
    const server = { allowTools: ['read_*', 'list_directory'], denyTools: ['read_media_file'] };
    expect(isToolAllowed(server, 'read_text_file')).toBe(true);
    expect(isToolAllowed(server, 'list_directory')).toBe(true);
    expect(isToolAllowed(server, 'read_media_file')).toBe(false);
    expect(isToolAllowed(server, 'write_file')).toBe(false);
    expect(isToolAllowed({ allowTools: undefined, denyTools: ['*delete*'] }, 'bulk_delete_all')).toBe(false);
    expect(isToolAllowed({ allowTools: undefined, denyTools: [] }, 'anything.at.all')).toBe(true);
  });

  test.each([
    [{ files: { command: 'x', allowTool: ['a'] } }, 'key "allowTool": unknown key'],
    [{ files: { command: 'x', url: 'http://y' } }, 'has both "command" (stdio) and "url" (HTTP)'],
    [{ files: { args: ['a'] } }, 'expected "command" (a stdio server to start) or "url"'],
    [{ files: { command: '' } }, 'key "command": expected a non-empty string'],
    [{ files: { command: 'x', args: 'a b' } }, 'key "args": expected an array of strings, got string "a b"'],
    [{ files: { command: 'x', env: { PORT: 8080 } } }, 'key "env.PORT": expected a string, got number 8080'],
    [{ files: { command: 'x', timeoutMs: '30s' } }, 'key "timeoutMs": expected a whole number of milliseconds'],
    [{ files: { command: 'x', disabled: 'yes' } }, 'key "disabled": expected true or false'],
    [
      { files: { command: 'x', elicitationTimeoutMs: 0 } },
      'key "elicitationTimeoutMs": expected a whole number of milliseconds from 1',
    ],
    [{ files: { command: 'x', headers: {} } }, '"url"/"headers" belong to HTTP servers'],
    [{ web: { url: 'ftp://files.example.com' } }, 'key "url": expected an http:// or https:// URL'],
    [{ web: { url: 'https://x/mcp', type: 'sse' } }, 'the deprecated HTTP+SSE transport is not supported'],
    [{ web: 'https://x/mcp' }, 'expected an object with "command" (stdio) or "url" (HTTP), got string'],
  ])('a bad server entry is an error naming file, server and key: %j', (servers, expected) => {
    const error = parseError(servers);
    expect(error.message).toContain(FILE);
    expect(error.message).toContain(`server "${Object.keys(servers)[0]}"`);
    expect(error.message).toContain(expected);
  });

  test('a URL error quotes the URL as written, so an expanded secret never reaches the message', () => {
    const error = parseError({ web: { url: '${SECRET_URL}' } }, { SECRET_URL: 'not a url with token abc123' });
    expect(error.message).toContain('${SECRET_URL}');
    expect(error.message).not.toContain('abc123');
  });

  test('a file that is not JSON or lacks mcpServers is an error that says what was expected', () => {
    expect(() => parseMcpConfig('{ "mcpServers": ', FILE, {})).toThrow(/not valid JSON.*Expected \{"mcpServers"/);
    expect(() => parseMcpConfig('[]', FILE, {})).toThrow(/expected a JSON object with an "mcpServers" key/);
    expect(() => parseMcpConfig('{"servers": {}}', FILE, {})).toThrow(/unknown top-level key "servers"/);
    expect(() => parseMcpConfig('{"mcpServers": []}', FILE, {})).toThrow(/"mcpServers" must be an object/);
  });

  describe('loadMcpConfig', () => {
    const directory = mkdtempSync(path.join(tmpdir(), 'mcp-config-'));
    afterAll(() => rmSync(directory, { recursive: true, force: true }));

    test('reads the file; no path means no servers; an unreadable file is named in the error', () => {
      const file = path.join(directory, 'mcp.json');
      writeFileSync(file, JSON.stringify({ mcpServers: { a: { command: 'x', args: ['${HOME_DIR}'] } } }));
      expect(loadMcpConfig(file, { HOME_DIR: '/srv/a' }).servers[0]).toMatchObject({ name: 'a', args: ['/srv/a'] });
      expect(loadMcpConfig(undefined)).toEqual({ file: undefined, servers: [] });
      expect(() => loadMcpConfig(path.join(directory, 'missing.json'))).toThrow(
        /Cannot read the MCP configuration file .*missing\.json/,
      );
    });
  });
});
