import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { resolveTestServer, startOnce } from '../../src/temporal-servers/test-server.js';
import { driveOneWorkflow } from '../../src/temporal-servers/test-server-training.js';
import { createTimeSkippingEnvironment } from '../../src/testing/environment.js';

/**
 * The SDK gives the JVM test server 5 s to open its port. On a loaded two-core machine a start took longer and failed
 * the whole test file ("did not start within 5s"); the start is tried again. A launcher that sleeps past the window on
 * its first start, then runs the real server, stands in for a JVM that was slow once.
 */

const directory = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-test-server-start-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe('the time-skipping test server', () => {
  test('a start slower than the SDK allows is tried again, on a new port, and the environment works', async () => {
    const real = await resolveTestServer(loadConfig());
    if (real.kind !== 'path') throw new Error(`The test server is not provisioned: ${real.reason}`);
    const slowOnce = path.join(directory, 'slow-once');
    const launcher = path.join(directory, 'launcher');
    const started = path.join(directory, 'starts');
    writeFileSync(
      launcher,
      [
        '#!/bin/sh',
        `echo "$1" >> '${started}'`,
        `if [ ! -e '${slowOnce}' ]; then touch '${slowOnce}'; sleep 7; fi`,
        `exec '${real.path}' "$@"`,
        '',
      ].join('\n'),
    );
    chmodSync(launcher, 0o755);

    const env = await createTimeSkippingEnvironment({ config: { ...loadConfig(), testServerPath: launcher } });
    try {
      expect(await env.connection.workflowService.getSystemInfo({})).toBeDefined();
      expect(existsSync(slowOnce)).toBe(true);
      const ports = readFileSync(started, 'utf8').trim().split('\n');
      expect(ports).toHaveLength(2);
      expect(new Set(ports).size).toBe(2);
    } finally {
      await env.teardown();
    }
  }, 60_000);

  test('a launcher that never opens its port fails after three starts, and the error names it', async () => {
    const launcher = path.join(directory, 'broken');
    const tries = path.join(directory, 'broken-starts');
    writeFileSync(launcher, `#!/bin/sh\necho "$1" >> '${tries}'\nexit 3\n`);
    chmodSync(launcher, 0o755);
    await expect(
      createTimeSkippingEnvironment({ config: { ...loadConfig(), testServerPath: launcher } }),
    ).rejects.toThrow(`The Temporal time-skipping test server at ${launcher} did not start`);
    expect(readFileSync(tries, 'utf8').trim().split('\n')).toHaveLength(3);
  }, 60_000);

  test('the provisioned server maps the classes of its start and of a workflow from its class archive', async () => {
    const real = await resolveTestServer(loadConfig());
    if (real.kind !== 'path') throw new Error(`The test server is not provisioned: ${real.reason}`);
    const log = path.join(directory, 'class-load.log');
    // -Xshare:on: a start that cannot map the archive fails instead of going on without it.
    await expect(
      startOnce(real.path, `-Xshare:on -Xlog:class+load=info:file=${log}`, (address) => driveOneWorkflow(address)),
    ).resolves.toBeUndefined();
    const loaded = readFileSync(log, 'utf8').split('\n');
    // The state of one workflow run: created by the first start of a workflow, never by the server's own start.
    expect(
      loaded.find((line) => line.includes(' io.temporal.internal.testservice.TestWorkflowMutableStateImpl ')),
    ).toMatch(/source: shared objects file \(top\)$/);
    // Without the archive about 3,500 classes are read from the jars; with it a few dozen (generated ones).
    expect(loaded.filter((line) => / source: (file|jar):/.test(line)).length).toBeLessThan(200);
  }, 60_000);
});
