import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { ExitCode } from '../../src/shared/exit-codes.js';
import { findFreePort, isPortOpen } from '../../src/temporal-servers/index.js';
import { killAll, runCli } from './helpers.js';

let directory: string;
let cleanEnv: NodeJS.ProcessEnv;

beforeAll(async () => {
  directory = await fs.mkdtemp(path.join(os.tmpdir(), 'durable-agent-config-errors-'));
  cleanEnv = { ...process.env };
  // The user's own settings stay out; where the provisioned servers are stays in.
  const kept = ['TEMPORAL_CLI_PATH', 'TEMPORAL_TEST_SERVER_PATH', 'DURABLE_AGENT_CACHE_DIR'];
  for (const name of Object.keys(cleanEnv)) {
    const ours = name.startsWith('TEMPORAL_') || name.startsWith('DURABLE_AGENT_');
    if (ours && !kept.includes(name)) delete cleanEnv[name];
  }
  // Where `dev` would keep its database and what it would serve, were it to get that far.
  cleanEnv.DURABLE_AGENT_DATA_DIR = path.join(directory, 'data');
});

afterEach(killAll);

afterAll(async () => {
  await killAll();
  await fs.rm(directory, { recursive: true, force: true });
});

/** No stack frame lines: errors are one readable line (src/cli/output.ts), not a dump. */
const noStackTrace = /\n\s+at /;

function addressError(address: string): ConfigError {
  try {
    loadConfig({ TEMPORAL_ADDRESS: address });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`TEMPORAL_ADDRESS=${address} was accepted`);
}

describe('TEMPORAL_ADDRESS', () => {
  it('accepts host:port, IPv4:port and [IPv6]:port', () => {
    for (const address of [
      'localhost:7233',
      '127.0.0.1:1',
      'temporal:7233',
      'my-ns.a1b2c.tmprl.cloud:7233',
      'host.example.:7233',
      'under_score:7233',
      'us-east-1.aws.api.temporal.io:7233',
      '[::1]:7233',
      '[2001:db8::7]:65535',
    ]) {
      expect(loadConfig({ TEMPORAL_ADDRESS: address }).temporal.address, address).toBe(address);
    }
  });

  it('refuses a port out of range, a missing host or port, a URL and a bare IPv6 host, naming the variable, the value and the shape', () => {
    const cases: [string, RegExp][] = [
      ['nonsense:99999', /the port 99999 is not from 1 to 65535/],
      ['localhost:0', /the port 0 is not from 1 to 65535/],
      ['localhost', /no port/],
      ['localhost:', /no port/],
      [':7233', /no host/],
      ['localhost:http', /the port "http" is not a number/],
      ['http://localhost:7233', /a URL, not host:port/],
      ['::1:7233', /an IPv6 host goes in brackets/],
      ['[::1', /closing bracket/],
      ['[nonsense]:7233', /"nonsense" is not an IPv6 address/],
      ['[::1]', /no port/],
      ['a:b:7233', /more than one colon/],
      ['local host:7233', /"local host" is not a host name/],
      ['999.1.1.1:7233', /"999.1.1.1" is not a host name or IP address/],
      ['[fe80::1%eth0]:7233', /"fe80::1%eth0" is not an IPv6 address/],
    ];
    for (const [address, problem] of cases) {
      const { message } = addressError(address);
      expect(message, address).toContain(`Invalid TEMPORAL_ADDRESS=${JSON.stringify(address)}`);
      expect(message, address).toMatch(problem);
      expect(message, address).toMatch(
        /expected host:port \(a port from 1 to 65535; an IPv6 host in brackets\), such as localhost:7233/,
      );
    }
  });

  it('a bad address is a configuration error (exit 2) naming the variable, for the worker and the client commands', async () => {
    for (const args of [['worker'], ['dev'], ['list'], ['send', '-c', 'x', 'hi']]) {
      const run = await runCli(args, { ...cleanEnv, TEMPORAL_ADDRESS: 'nonsense:99999' });
      expect(run.code, args.join(' ')).toBe(ExitCode.Usage);
      expect(run.stderr, args.join(' ')).toMatch(
        /^durable-agent: Invalid TEMPORAL_ADDRESS="nonsense:99999" \(the port 99999 is not from 1 to 65535\): expected host:port/,
      );
      expect(run.stderr).not.toMatch(noStackTrace);
    }
  });
});

describe('TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH', () => {
  it('a certificate file that cannot be read is a configuration error (exit 2) naming the variable, not an outage', async () => {
    const key = path.join(directory, 'client.key');
    await fs.writeFile(key, 'not really a key');
    const missing = path.join(directory, 'no-such-client.crt');
    const tlsEnv = { TEMPORAL_TLS_CLIENT_CERT_PATH: missing, TEMPORAL_TLS_CLIENT_KEY_PATH: key };
    for (const args of [['worker'], ['list']]) {
      const run = await runCli(args, { ...cleanEnv, ...tlsEnv, TEMPORAL_ADDRESS: '127.0.0.1:1' });
      expect(run.code, args.join(' ')).toBe(ExitCode.Usage);
      expect(run.stderr, args.join(' ')).toBe(
        `durable-agent: Cannot read TEMPORAL_TLS_CLIENT_CERT_PATH=${JSON.stringify(missing)} (ENOENT): expected a ` +
          'readable PEM file.\n',
      );
    }
  });
});

describe('DURABLE_AGENT_MCP_CONFIG', () => {
  const files = {
    missing: () => path.join(directory, 'no-such-file.json'),
    malformed: async () => {
      const file = path.join(directory, 'malformed.json');
      await fs.writeFile(file, '{"mcpServers": {');
      return file;
    },
    badKey: async () => {
      const file = path.join(directory, 'bad-key.json');
      await fs.writeFile(file, JSON.stringify({ mcpServers: { files: { command: 'echo', bogus: 1 } } }));
      return file;
    },
    unsetVariable: async () => {
      const file = path.join(directory, 'unset-variable.json');
      const server = { url: 'http://127.0.0.1:1/mcp', headers: { Authorization: 'Bearer ${NO_SUCH_TOKEN_VARIABLE}' } };
      await fs.writeFile(file, JSON.stringify({ mcpServers: { search: server } }));
      return file;
    },
  };
  const expected = {
    missing: /Cannot read the MCP configuration file .*no-such-file\.json/,
    malformed: /malformed\.json: not valid JSON/,
    badKey: /bad-key\.json: server "files" key "bogus": unknown key/,
    unsetVariable:
      /unset-variable\.json: server "search" key "headers\.Authorization": environment variable NO_SUCH_TOKEN_VARIABLE is not set/,
  };

  it('worker: a missing, malformed or invalid file is a configuration error (exit 2) naming the file and the key', async () => {
    for (const kind of Object.keys(files) as (keyof typeof files)[]) {
      const file = await files[kind]();
      // Port 1: nothing listens there; the configuration must fail before any connection is tried.
      const run = await runCli(['worker'], {
        ...cleanEnv,
        TEMPORAL_ADDRESS: '127.0.0.1:1',
        DURABLE_AGENT_MCP_CONFIG: file,
      });
      expect(run.code, kind).toBe(ExitCode.Usage);
      expect(run.stderr, kind).toMatch(expected[kind]);
      expect(run.stderr, kind).not.toMatch(/Cannot reach Temporal/);
      expect(run.stderr, kind).not.toMatch(noStackTrace);
    }
  });

  it('dev: a bad MCP configuration fails before the dev server starts', async () => {
    const devPort = await findFreePort();
    const uiPort = await findFreePort();
    const run = await runCli(['dev'], {
      ...cleanEnv,
      DURABLE_AGENT_DEV_PORT: String(devPort),
      DURABLE_AGENT_UI_PORT: String(uiPort),
      DURABLE_AGENT_MCP_CONFIG: await files.badKey(),
    });
    expect(run.code).toBe(ExitCode.Usage);
    expect(run.stderr).toMatch(expected.badKey);
    expect(run.stdout).not.toMatch(/Temporal dev server/);
    expect(run.stderr).not.toMatch(noStackTrace);
    expect(await isPortOpen(devPort)).toBe(false);
    // Nothing was started: no lock taken, no database created.
    await expect(fs.readdir(cleanEnv.DURABLE_AGENT_DATA_DIR!)).rejects.toThrow(/ENOENT/);
  }, 120_000);
});
