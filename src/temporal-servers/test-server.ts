import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config/index.js';
import { errorMessage } from '../shared/errors.js';
import { removeTree, type CacheEntry } from './cache.js';
import { findFreePort, waitForPort } from './ports.js';
import { driveOneWorkflow } from './test-server-training.js';
import type { Progress } from './progress.js';
import { ensureServer, resolveServer, type ProvisionOptions, type ServerRecipe } from './provision.js';
import type { ProvisionedServer } from './provisioned-server.js';
import { commandExists, runCommand } from './run-command.js';
import { MAVEN_DEPENDENCY_PLUGIN_VERSION, SLF4J_NOP_VERSION, TEMPORAL_TEST_SERVER_VERSION } from './versions.js';

const ARTIFACT = `io.temporal:temporal-test-server:${TEMPORAL_TEST_SERVER_VERSION}`;

/** Where the time-skipping test server lives in the cache, whether or not it has been fetched yet. */
export function testServerCacheEntry(config: Pick<Config, 'cacheDir'>): CacheEntry {
  return {
    cacheDir: config.cacheDir,
    // `-cds`: the entry has a class archive beside its launcher; entries without one (0.1.0's) are not reused.
    name: `temporal-test-server-${TEMPORAL_TEST_SERVER_VERSION}-cds`,
    executable: 'launcher',
  };
}

const installHint =
  `Install Maven and a Java runtime 8 or newer (e.g. \`apt-get install maven openjdk-17-jre-headless\`) so ` +
  `durable-agent can fetch ${ARTIFACT} from Maven Central, or set TEMPORAL_TEST_SERVER_PATH to an existing ` +
  'time-skipping test server executable.';

/** The time-skipping test server, Temporal's Maven artifact with a launcher script, when `mvn` and `java` exist. */
function testServerRecipe(config: Config): ServerRecipe {
  const entry = testServerCacheEntry(config);
  return {
    kind: 'test server',
    override: { variable: 'TEMPORAL_TEST_SERVER_PATH', path: config.testServerPath },
    sources: [
      {
        name: 'The Maven download',
        entry,
        missingTools: async () => {
          const missing = [];
          if (!(await commandExists('mvn', ['--version']))) missing.push('`mvn`');
          if (!(await commandExists('java', ['-version']))) missing.push('`java`');
          return missing.length > 0 ? `${missing.join(' and ')} not found on PATH. ${installHint}` : undefined;
        },
        description: `fetching ${ARTIFACT} from Maven Central into ${entry.cacheDir} (once per version)`,
        provide: fetchTestServer,
      },
    ],
  };
}

/**
 * Finds the time-skipping test server: TEMPORAL_TEST_SERVER_PATH, then the cache, then Temporal's Maven artifact with
 * a launcher script when `mvn` and `java` are installed. Without them it answers `sdk-download` (see
 * {@link resolveServer}).
 */
export async function resolveTestServer(config: Config, options: ProvisionOptions = {}): Promise<ProvisionedServer> {
  return await resolveServer(testServerRecipe(config), options);
}

/** Like {@link resolveTestServer}, with the SDK's own download as the last resort (see {@link ensureServer}). */
export async function ensureTestServer(config: Config, options: ProvisionOptions = {}): Promise<string> {
  return await ensureServer(testServerRecipe(config), options);
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

const MAIN_CLASS = 'io.temporal.testserver.TestServer';
/** Class data sharing: the classes a start loads, parsed and verified once at provisioning (see recordClassArchive). */
const CLASS_ARCHIVE = 'classes.jsa';

// `exec` matters: the SDK stops the server by SIGKILL on the PID it spawned, so that PID must be the JVM itself or the
// JVM is orphaned and keeps its port. SerialGC, C1-only compilation and the class archive cut start-up time on small
// machines (0.7 → 0.3 s of CPU, 0.65 → 0.25 s to an open port on an idle two-core machine), which matters because the
// SDK waits only about 5 s for the port to answer. The classpath is relative and explicit, in the order the archive
// recorded it: the JVM uses the archive only for the same classpath, and an archive it cannot use (another JVM build
// than the one that recorded it) only makes the start slower, so its complaint is not logged.
function launcherScript(classpath: string): string {
  return `#!/bin/sh
# Temporal time-skipping test server ${TEMPORAL_TEST_SERVER_VERSION}, provisioned by durable-agent.
# Usage: launcher <port> [--enable-time-skipping]
cd -- "$(dirname -- "$0")" || exit 1
if [ -n "$JAVA_HOME" ]; then JAVA="$JAVA_HOME/bin/java"; else JAVA=java; fi
SHARED=
if [ -f ${CLASS_ARCHIVE} ]; then SHARED="-XX:SharedArchiveFile=${CLASS_ARCHIVE} -Xlog:cds=off -Xlog:cds+dynamic=off"; fi
exec "$JAVA" -XX:+UseSerialGC -XX:TieredStopAtLevel=1 $SHARED -cp '${classpath}' ${MAIN_CLASS} "$@"
`;
}

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
  const jars = (await fs.readdir(path.join(stagingDir, 'lib'))).filter((name) => name.endsWith('.jar')).sort();
  const launcher = path.join(stagingDir, 'launcher');
  await fs.writeFile(launcher, launcherScript(jars.map((jar) => `lib/${jar}`).join(':')), { mode: 0o755 });
  await progress.step('recording the classes of a start and of one workflow (class data sharing)', () =>
    recordClassArchive(launcher, stagingDir, progress),
  );
}

/**
 * Starts the server once with `-XX:ArchiveClassesAtExit`, runs one workflow on it (test-server-training.ts) and stops
 * it with SIGTERM: the JVM writes the classes it loaded to CLASS_ARCHIVE as it exits, and every later start maps them
 * instead of parsing and verifying them again. The archive is then checked by a start that must use it
 * (`-Xshare:on`): the JVM maps the file without checking its contents, and one cut short makes every start crash, so an
 * archive that fails is removed. It is only an optimization: without one the server starts as before.
 */
async function recordClassArchive(launcher: string, directory: string, progress: Progress): Promise<void> {
  const archive = path.join(directory, CLASS_ARCHIVE);
  const recorded = await startOnce(launcher, `-XX:ArchiveClassesAtExit=${CLASS_ARCHIVE}`, async (address) => {
    await driveOneWorkflow(address).catch((error: unknown) =>
      progress.info(`recorded the start's classes only (one workflow's calls failed: ${errorMessage(error)})`),
    );
  });
  const why = recorded ?? (await startOnce(launcher, '-Xshare:on'));
  if (why !== undefined) {
    await fs.rm(archive, { force: true });
    progress.info(`the test server starts without a class archive (slower, the same server): ${why}`);
  }
}

/**
 * Starts the launcher with `javaOptions` added, waits for its port, runs `use` on it and stops it with SIGTERM (so
 * that the JVM exits normally); resolves with why it did not open its port, or undefined when it did.
 * @internal exported for test/temporal-servers/test-server-start.test.ts
 */
export async function startOnce(
  launcher: string,
  javaOptions: string,
  use?: (address: string) => Promise<void>,
): Promise<string | undefined> {
  const port = await findFreePort();
  const child = spawn(launcher, [String(port), '--enable-time-skipping'], {
    env: { ...process.env, JAVA_TOOL_OPTIONS: [process.env.JAVA_TOOL_OPTIONS, javaOptions].filter(Boolean).join(' ') },
    stdio: 'ignore',
  });
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const stopped = new AbortController();
  child.once('error', () => stopped.abort());
  child.once('close', () => stopped.abort());
  try {
    await waitForPort(port, { timeoutMs: 60_000, signal: stopped.signal });
    await use?.(`127.0.0.1:${port}`);
    return undefined;
  } catch (error) {
    return stopped.signal.aborted ? `the JVM exited at start with ${javaOptions}` : errorMessage(error);
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}
