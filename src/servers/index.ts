export { ensureDevServer, resolveDevServer, devServerCacheEntry, type ProvisionOptions } from './dev-server.js';
export { ensureTestServer, resolveTestServer, testServerCacheEntry } from './test-server.js';
export type { ProvisionedServer } from './provisioned-server.js';
export { ServerUnavailableError } from './errors.js';
export { stderrLog, silentLog, type ProgressLog } from './progress.js';
export { DURABLE_AGENT_SEARCH_ATTRIBUTES, DURABLE_AGENT_SEARCH_ATTRIBUTE_KEYS } from '../shared/search-attributes.js';
export { searchAttributeFlags } from './search-attributes.js';
export { findFreePort, isPortOpen, waitForPort } from './ports.js';
export { TEMPORAL_CLI_VERSION, TEMPORAL_CLI_CLIEXT_VERSION, TEMPORAL_TEST_SERVER_VERSION } from './versions.js';
