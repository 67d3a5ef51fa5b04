import fs from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config.js';
import { removeTree, type CacheEntry } from './cache.js';
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
    name: `temporal-test-server-${TEMPORAL_TEST_SERVER_VERSION}`,
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
    entry,
    missingBuildTools: async () => {
      const missing = [];
      if (!(await commandExists('mvn', ['--version']))) missing.push('`mvn`');
      if (!(await commandExists('java', ['-version']))) missing.push('`java`');
      return missing.length > 0 ? `${missing.join(' and ')} not found on PATH. ${installHint}` : undefined;
    },
    buildDescription: `fetching ${ARTIFACT} from Maven Central into ${entry.cacheDir} (once per version)`,
    build: fetchTestServer,
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
