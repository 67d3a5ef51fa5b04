/**
 * Pinned versions of the Temporal servers that durable-agent provisions. Bumping one of these is the only way a
 * different binary gets used: the cache is keyed by these strings.
 */

/** The `temporal` CLI (dev server with the Web UI compiled in), built from Temporal's Go module source. */
export const TEMPORAL_CLI_VERSION = '1.8.2';

/**
 * The CLI's `cliext` submodule at the commit of tag v1.8.2 (c579925f193f). It has no tags of its own, and the Go
 * module proxy refuses a bare commit hash, so it is addressed by its pseudo-version.
 */
export const TEMPORAL_CLI_CLIEXT_VERSION = 'v0.0.0-20260731000218-c579925f193f';

/** Temporal's time-skipping test server, published with sdk-java on Maven Central. */
export const TEMPORAL_TEST_SERVER_VERSION = '1.38.0';

/** Silences the test server's logging, which would otherwise warn about a missing SLF4J binding on every start. */
export const SLF4J_NOP_VERSION = '1.7.36';

/** Pinned so a new plugin release cannot change how the classpath is resolved. */
export const MAVEN_DEPENDENCY_PLUGIN_VERSION = '3.8.1';
