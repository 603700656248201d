/**
 * `import.meta.url` in the CommonJS bundles: scripts/build.ts injects this module and replaces
 * every `import.meta.url` of the sources with `importMetaUrl`: the bundle's own file URL, as in
 * ESM (so `new URL('./body-worker.js', import.meta.url)` finds the worker beside the bundle).
 */
import { pathToFileURL } from 'node:url';

export const importMetaUrl = pathToFileURL(__filename).href;
