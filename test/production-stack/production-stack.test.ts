import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { load as parseYaml } from 'js-yaml';
import { TypedSearchAttributes } from '@temporalio/common';
import { DURABLE_AGENT_SEARCH_ATTRIBUTE_KEYS } from '../../src/shared/search-attributes.js';
import { TEMPORAL_SERVER_VERSION } from '../../src/temporal-servers/temporal-server-build.js';

// The cheap paths of scripts/production-stack.mjs: bad input and missing tools, answered before anything starts. The
// stack itself runs in scripts/reliability.mjs.

const root = path.resolve(__dirname, '../..');
const script = path.join(root, 'scripts/production-stack.mjs');
let scratch: string;

function stack(args: string[], env: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, [script, ...args], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, DURABLE_AGENT_CACHE_DIR: path.join(scratch, 'cache'), ...env },
    timeout: 30_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

function newDir(name: string): string {
  const dir = path.join(scratch, name);
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

/** A folder of stand-ins for PostgreSQL's tools that only answer `--version`, so no real server is needed. */
function fakePostgres(): string {
  const bin = newDir('fake-postgres-bin');
  for (const tool of ['initdb', 'pg_ctl', 'postgres', 'pg_isready']) {
    fs.writeFileSync(path.join(bin, tool), '#!/bin/sh\necho "postgres (PostgreSQL) 15.0"\n', { mode: 0o755 });
  }
  return bin;
}

/** A PATH with the few commands the script runs besides PostgreSQL's (and no `go`). */
function pathWithoutGo(): string {
  const bin = newDir('path-without-go');
  for (const command of ['id', 'runuser', 'sh']) {
    const found = spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' }).stdout.trim();
    if (found) fs.symlinkSync(found, path.join(bin, command));
  }
  return bin;
}

beforeAll(() => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'production-stack-test-'));
});

afterAll(() => {
  fs.rmSync(scratch, { recursive: true, force: true });
});

describe('production-stack: the command line', () => {
  test('kill of an unknown role exits 2 and names the roles', () => {
    const { code, stderr } = stack(['kill', newDir('any'), 'scheduler']);
    expect(code).toBe(2);
    expect(stderr).toContain('unknown role "scheduler": one of postgres, history, matching, frontend, internal-worker');
  });

  test('an unknown command, or a command without DIR, exits 2 with the usage', () => {
    for (const args of [['start', 'x'], ['up'], []]) {
      const { code, stderr } = stack(args);
      expect(code, args.join(' ')).toBe(2);
      expect(stderr).toContain('usage: node scripts/production-stack.mjs up DIR');
    }
  });

  test('--port takes a TCP port', () => {
    const { code, stderr } = stack(['up', newDir('port'), '--port', 'seventy']);
    expect(code).toBe(2);
    expect(stderr).toContain('--port takes a TCP port');
  });

  test('status, kill and down of a DIR without a stack exit 2 and say that up sets one up', () => {
    const dir = newDir('empty');
    for (const args of [
      ['status', dir],
      ['kill', dir, 'history'],
      ['down', dir],
    ]) {
      const { code, stderr } = stack(args);
      expect(code, args[0]).toBe(2);
      expect(stderr).toContain(`${dir} holds no production stack`);
    }
  });
});

describe('production-stack: up refuses before starting anything', () => {
  test('a DIR set up by an earlier version: names both versions and the upgrade section', () => {
    const dir = newDir('earlier');
    const state = { layout: 1, temporalServerVersion: '1.30.1', postgresMajor: '15', ports: {}, pids: {} };
    fs.writeFileSync(path.join(dir, 'state.json'), JSON.stringify(state));
    const { code, stderr } = stack(['up', dir]);
    expect(code).toBe(1);
    expect(stderr).toContain(
      `Temporal Server 1.30.1); this one runs layout 1, Temporal Server ${TEMPORAL_SERVER_VERSION}`,
    );
    expect(stderr).toContain('docs/production.md ("Upgrading Temporal Server")');
    expect(fs.readdirSync(dir)).toEqual(['state.json']);
  });

  test('--upgrade takes one minor version at a time, never two', () => {
    const dir = newDir('two-minors');
    const [major, minor] = TEMPORAL_SERVER_VERSION.split('.').map(Number);
    const twoBack = `${major}.${minor! - 2}.0`;
    const state = { layout: 1, temporalServerVersion: twoBack, postgresMajor: '15', ports: {}, pids: {} };
    fs.writeFileSync(path.join(dir, 'state.json'), JSON.stringify(state));
    const { code, stderr } = stack(['up', dir, '--upgrade']);
    expect(code).toBe(1);
    expect(stderr).toContain(`Temporal Server ${twoBack}); this one runs layout 1`);
    expect(stderr).toContain('one minor version at a time');
  });

  test('a DIR that holds something else', () => {
    const dir = newDir('something-else');
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'mine');
    const { code, stderr } = stack(['up', dir]);
    expect(code).toBe(1);
    expect(stderr).toContain('is not empty and holds no production stack');
  });

  test('no PostgreSQL: exit 69, saying what to install', () => {
    const dir = newDir('no-postgres');
    const { code, stderr } = stack(['up', dir], { POSTGRES_BIN_DIR: path.join(scratch, 'nowhere') });
    expect(code).toBe(69);
    expect(stderr).toContain("PostgreSQL's server (initdb, pg_ctl, postgres, pg_isready) was not found");
    expect(stderr).toContain('apt-get install postgresql-15');
    expect(fs.existsSync(path.join(dir, 'state.json'))).toBe(false);
  });

  test('no Go and no cached build: exit 69, saying what to install; nothing written to DIR', () => {
    const dir = newDir('no-go');
    const { code, stderr } = stack(['up', dir], { POSTGRES_BIN_DIR: fakePostgres(), PATH: pathWithoutGo() });
    expect(stderr).toContain(`Temporal Server ${TEMPORAL_SERVER_VERSION} is not built yet and \`go\` was not found`);
    expect(code).toBe(69);
    expect(fs.readdirSync(dir)).toEqual([]);
  });
});

describe('production-stack: one source of truth with docker-compose.yml', () => {
  const compose = parseYaml(fs.readFileSync(path.join(root, 'docker-compose.yml'), 'utf8')) as {
    services: Record<string, { image?: string }>;
    configs: Record<string, { file?: string }>;
  };

  test('the Temporal Server version built is the one the compose file names for the server and its admin tools', () => {
    const images = Object.values(compose.services)
      .map((service) => service.image ?? '')
      .filter((image) => /^temporalio\/(server|admin-tools):/.test(image));
    expect(images).toHaveLength(3);
    for (const image of images) expect(image.split(':')[1]).toBe(TEMPORAL_SERVER_VERSION);
  });

  test('the compose jobs run the scripts the stack runs, and the namespace script registers every search attribute', () => {
    expect(compose.configs['temporal-schema-script']!.file).toBe('./scripts/temporal-schema.sh');
    expect(compose.configs['temporal-namespace-script']!.file).toBe('./scripts/temporal-namespace.sh');
    const namespaceScript = fs.readFileSync(path.join(root, 'scripts/temporal-namespace.sh'), 'utf8');
    const listed = /^attributes='([^']*)'$/m.exec(namespaceScript)?.[1]?.split(' ');
    expect(listed).toEqual(
      DURABLE_AGENT_SEARCH_ATTRIBUTE_KEYS.map((key) => `${key.name}=${TypedSearchAttributes.toMetadataType(key.type)}`),
    );
  });
});
