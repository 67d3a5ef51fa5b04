import fs from 'node:fs/promises';
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { isExecutable } from './cache.js';
import { ServerUnavailableError } from './errors.js';
import type { Progress } from './progress.js';
import type { ServerKind } from './provisioned-server.js';
import { errorMessage } from '../shared/errors.js';

/**
 * The last resort for callers that run the binary themselves (`durable-agent dev`, `provision`): let
 * @temporalio/testing download its default build (machines with internet access only), by starting and stopping one
 * environment, then use the file it left in its download directory. `reason` says why nothing local could provide it.
 */
export async function downloadWithSdk(
  cacheDir: string,
  kind: ServerKind,
  reason: string,
  progress: Progress,
): Promise<string> {
  const downloadDir = path.join(cacheDir, `sdk-download-${kind.replace(' ', '-')}`);
  await fs.mkdir(downloadDir, { recursive: true });
  const executable = { type: 'cached-download' as const, downloadDir };
  try {
    await progress.step(`downloading the SDK's default ${kind} (${reason.split('.')[0]})`, async () => {
      const environment =
        kind === 'dev server'
          ? await TestWorkflowEnvironment.createLocal({ server: { executable } })
          : await TestWorkflowEnvironment.createTimeSkipping({ server: { executable } });
      await environment.teardown();
    });
  } catch (error) {
    const cause = errorMessage(error);
    throw new ServerUnavailableError(
      `Cannot provision the Temporal ${kind}: ${reason} (The SDK's own download failed too: ${cause})`,
      { cause: error },
    );
  }
  const files = [];
  for (const name of await fs.readdir(downloadDir)) {
    const file = path.join(downloadDir, name);
    if (await isExecutable(file)) files.push({ file, modified: (await fs.stat(file)).mtimeMs });
  }
  const newest = files.sort((a, b) => b.modified - a.modified)[0];
  if (!newest) throw new ServerUnavailableError(`The SDK's download left no executable in ${downloadDir}.`);
  return newest.file;
}
