export * from './shared/types.js';
export { FailureType } from './shared/errors.js';
export { loadConfig, ConfigError, type Config } from './config.js';
export * from './client.js';
