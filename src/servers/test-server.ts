import fs from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config.js';
import { installIntoCache, isExecutable, removeTree } from './cache.js';
import type { ProvisionOptions } from './dev-server.js';
import { ServerUnavailableError } from './errors.js';
import { downloadWithSdk } from './sdk-download.js';
import { Progress, stderrLog } from './progress.js';
import type { ProvisionedServer } from './provisioned-server.js';
import { commandExists, runCommand } from './run-command.js';
import { MAVEN_DEPENDENCY_PLUGIN_VERSION, SLF4J_NOP_VERSION, TEMPORAL_TEST_SERVER_VERSION } from './versions.js';

const SUBJECT = 'test server';
const ARTIFACT = `io.temporal:temporal-test-server:${TEMPORAL_TEST_SERVER_VERSION}`;

/** Where the time-skipping test server lives in the cache, whether or not it has been fetched yet. */
export function testServerCacheEntry(config: Pick<Config, 'cacheDir'>) {
  return {
    cacheDir: config.cacheDir,
    name: `temporal-test-server-${TEMPORAL_TEST_SERVER_VERSION}`,
    executable: 'launcher',
  };
}

const installHint =
  `Install Maven and a Java runtime 8 or newer (e.g. \`apt-get install maven openjdk-17-jre-headless\`) so ` +
  `durable-agent can fetch ${ARTIFACT} from Maven Central, or set TEMPORAL_TEST_SERVER_PATH to an existing ` +
  'time-skipping test server executable.';

/**
 * Finds the time-skipping test server: TEMPORAL_TEST_SERVER_PATH, then the cache, then Temporal's Maven artifact with
 * a launcher script when `mvn` and `java` are installed. Without them it answers `sdk-download`, leaving the download
 * to @temporalio/testing, which works only on machines that reach Temporal's download site.
 */
export async function resolveTestServer(config: Config, options: ProvisionOptions = {}): Promise<ProvisionedServer> {
  const progress = new Progress(SUBJECT, options.log ?? stderrLog);
  if (config.testServerPath !== undefined) {
    const file = path.resolve(config.testServerPath);
    if (!(await isExecutable(file))) {
      throw new ServerUnavailableError(`TEMPORAL_TEST_SERVER_PATH=${config.testServerPath} is not an executable file.`);
    }
    return { kind: 'path', path: file, source: 'environment' };
  }
  const entry = testServerCacheEntry(config);
  const cached = path.join(entry.cacheDir, entry.name, entry.executable);
  if (await isExecutable(cached)) return { kind: 'path', path: cached, source: 'cache' };
  const missing = [];
  if (!(await commandExists('mvn', ['--version']))) missing.push('`mvn`');
  if (!(await commandExists('java', ['-version']))) missing.push('`java`');
  if (missing.length > 0) {
    return { kind: 'sdk-download', reason: `${missing.join(' and ')} not found on PATH. ${installHint}` };
  }
  progress.info(`fetching ${ARTIFACT} from Maven Central into ${entry.cacheDir} (once per version)`);
  const installed = await installIntoCache(entry, progress, (stagingDir) => fetchTestServer(stagingDir, progress));
  progress.finished(`ready: ${installed}`);
  return { kind: 'path', path: installed, source: 'built' };
}

/**
 * Like {@link resolveTestServer}, for callers that run the binary themselves: when nothing local can provide it, the
 * SDK's own download is tried here, and if that fails too the error says what to install.
 */
export async function ensureTestServer(config: Config, options: ProvisionOptions = {}): Promise<string> {
  const server = await resolveTestServer(config, options);
  if (server.kind === 'path') return server.path;
  if (options.sdkDownload === false) {
    throw new ServerUnavailableError(`Cannot provision the Temporal test server: ${server.reason}`);
  }
  return await downloadWithSdk(config, 'test server', server.reason, new Progress(SUBJECT, options.log ?? stderrLog));
}

// A pom-only project: the test server jar has no Class-Path in its manifest, so Maven resolves the classpath for us.
const pom = `<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>durable-agent</groupId>
  <artifactId>temporal-test-server-classpath</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>io.temporal</groupId>
      <artifactId>temporal-test-server</artifactId>
      <version>${TEMPORAL_TEST_SERVER_VERSION}</version>
    </dependency>
    <dependency>
      <groupId>org.slf4j</groupId>
      <artifactId>slf4j-nop</artifactId>
      <version>${SLF4J_NOP_VERSION}</version>
    </dependency>
  </dependencies>
</project>
`;

// `exec` matters: the SDK stops the server by SIGKILL on the PID it spawned, so that PID must be the JVM itself or the
// JVM is orphaned and keeps its port. SerialGC and C1-only compilation cut start-up time on small machines, which
// matters because the SDK waits only about 5 s for the port to answer.
const launcher = `#!/bin/sh
# Temporal time-skipping test server ${TEMPORAL_TEST_SERVER_VERSION}, provisioned by durable-agent.
# Usage: launcher <port> [--enable-time-skipping]
DIR=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
if [ -n "$JAVA_HOME" ]; then JAVA="$JAVA_HOME/bin/java"; else JAVA=java; fi
exec "$JAVA" -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$DIR/lib/*" io.temporal.testserver.TestServer "$@"
`;

async function fetchTestServer(stagingDir: string, progress: Progress): Promise<void> {
  const projectDir = path.join(stagingDir, 'maven-project');
  await fs.mkdir(projectDir);
  await fs.writeFile(path.join(projectDir, 'pom.xml'), pom);
  await progress.step(`resolving ${ARTIFACT} and its runtime dependencies with Maven`, () =>
    runCommand(
      'mvn',
      [
        '-B',
        '-q',
        `org.apache.maven.plugins:maven-dependency-plugin:${MAVEN_DEPENDENCY_PLUGIN_VERSION}:copy-dependencies`,
        '-DincludeScope=runtime',
        `-DoutputDirectory=${path.join(stagingDir, 'lib')}`,
      ],
      { cwd: projectDir },
    ),
  );
  await removeTree(projectDir);
  await fs.writeFile(path.join(stagingDir, 'launcher'), launcher, { mode: 0o755 });
}
