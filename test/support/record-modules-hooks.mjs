// Loader hooks of record-modules.mjs: each ES module's URL, as it loads.
import { appendFileSync } from 'node:fs';

/** @type {string} */
let file;

export function initialize(/** @type {{ file: string }} */ data) {
  file = data.file;
}

export async function load(
  /** @type {string} */ url,
  /** @type {unknown} */ context,
  /** @type {(url: string, context: unknown) => Promise<unknown>} */ next,
) {
  appendFileSync(file, `${url}\n`);
  return next(url, context);
}
