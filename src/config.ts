// The configuration lives in src/config/; this module keeps the paths other modules import.

export * from './config/options.js';
export { type ResolvedConfig, resolveConfig } from './config/resolve.js';
export { isBucketName, isHttpUrl, normalizePrefix } from './config/rules.js';
export { InvalidOptionError } from './invalid-option.js';
