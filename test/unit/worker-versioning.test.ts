import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { packageVersion } from '../../src/node/package-version.js';
import { defaultBuildId, deploymentVersion, gitCommit, workerDeploymentOptions } from '../../src/worker/versioning.js';

function configError(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error(`${JSON.stringify(env)} was accepted`);
}

describe('worker versioning configuration', () => {
  it('worker versioning: off unless asked for, so an unversioned worker polls as before', () => {
    expect(loadConfig({}).workerVersioning).toBeUndefined();
    expect(loadConfig({ DURABLE_AGENT_WORKER_VERSIONING: 'false' }).workerVersioning).toBeUndefined();
  });

  it('worker versioning: the deployment name or the build id turns it on; the other is defaulted', () => {
    expect(loadConfig({ DURABLE_AGENT_DEPLOYMENT_NAME: 'support-agent' }).workerVersioning).toEqual({
      deploymentName: 'support-agent',
      buildId: undefined,
    });
    expect(loadConfig({ DURABLE_AGENT_BUILD_ID: '0.2.0+1a2b3c4d5e6f' }).workerVersioning).toEqual({
      deploymentName: 'durable-agent',
      buildId: '0.2.0+1a2b3c4d5e6f',
    });
    expect(loadConfig({ DURABLE_AGENT_WORKER_VERSIONING: '1' }).workerVersioning).toEqual({
      deploymentName: 'durable-agent',
      buildId: undefined,
    });
  });

  it('worker versioning: DURABLE_AGENT_WORKER_VERSIONING=false wins over a name and a build id', () => {
    const env = {
      DURABLE_AGENT_DEPLOYMENT_NAME: 'agent',
      DURABLE_AGENT_BUILD_ID: 'b1',
      DURABLE_AGENT_WORKER_VERSIONING: 'off',
    };
    expect(loadConfig(env).workerVersioning).toBeUndefined();
  });

  it('worker versioning: a bad value names its variable, the value and what is expected', () => {
    expect(configError({ DURABLE_AGENT_WORKER_VERSIONING: 'maybe' })).toBe(
      'Invalid DURABLE_AGENT_WORKER_VERSIONING="maybe": expected true or false.',
    );
    expect(configError({ DURABLE_AGENT_DEPLOYMENT_NAME: 'support.agent' })).toBe(
      'Invalid DURABLE_AGENT_DEPLOYMENT_NAME="support.agent": expected a name of letters, digits, "-" and "_" ' +
        '(at most 255), such as durable-agent.',
    );
    expect(configError({ DURABLE_AGENT_BUILD_ID: 'v 2' })).toMatch(
      /^Invalid DURABLE_AGENT_BUILD_ID="v 2": expected letters, digits, "\.", "\+", "-" and "_" \(at most 255\)/,
    );
    expect(configError({ DURABLE_AGENT_BUILD_ID: 'a:b' })).toMatch(/^Invalid DURABLE_AGENT_BUILD_ID="a:b"/);
    expect(configError({ DURABLE_AGENT_DEPLOYMENT_NAME: 'x'.repeat(256) })).toMatch(/at most 255/);
  });
});

describe('the default build id', () => {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-build-id-'));
  afterAll(() => rmSync(directory, { recursive: true, force: true }));
  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', args, { cwd, stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();

  it('build id: the package version and the checkout commit, or the package version alone without git', () => {
    const commit = 'a'.repeat(40);
    expect(defaultBuildId(commit)).toBe(`${packageVersion()}+aaaaaaaaaaaa`);
    expect(defaultBuildId(undefined)).toBe(packageVersion());
  });

  it('build id: the commit of the checkout the package is, never of a checkout that merely holds it', () => {
    const checkout = path.join(directory, 'checkout');
    mkdirSync(path.join(checkout, 'node_modules/durable-agent'), { recursive: true });
    git(checkout, 'init', '--quiet');
    writeFileSync(path.join(checkout, 'file.txt'), 'x');
    git(checkout, 'add', 'file.txt');
    git(checkout, '-c', 'user.name=test', '-c', 'user.email=test@example.com', 'commit', '--quiet', '-m', 'one');
    const head = git(checkout, 'rev-parse', 'HEAD');

    expect(gitCommit(checkout)).toBe(head);
    expect(gitCommit(path.join(checkout, 'node_modules/durable-agent'))).toBeUndefined();
    expect(gitCommit(path.join(directory))).toBeUndefined();
    expect(gitCommit(path.join(directory, 'missing'))).toBeUndefined();
  });

  it('build id: a versioned worker runs pinned, as the configured version or the default one', () => {
    expect(deploymentVersion({ deploymentName: 'agent', buildId: 'b1' })).toEqual({
      deploymentName: 'agent',
      buildId: 'b1',
    });
    expect(deploymentVersion({ deploymentName: 'agent', buildId: undefined }).buildId).toBe(
      defaultBuildId(gitCommit()),
    );
    expect(workerDeploymentOptions({ deploymentName: 'agent', buildId: 'b1' })).toEqual({
      workerDeploymentOptions: {
        version: { deploymentName: 'agent', buildId: 'b1' },
        useWorkerVersioning: true,
        defaultVersioningBehavior: 'PINNED',
      },
    });
  });
});
