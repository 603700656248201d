// Preload (`node --import`) that writes every module the process loads to the file named by
// LOADED_MODULES_FILE, one URL or path a line: ES modules as they load (a loader hook, on Node
// 20.6 and later), CommonJS modules from the require cache at exit. For the tests of what an
// exporter-only import loads.
import { appendFileSync } from 'node:fs';
import Module, { register } from 'node:module';
import { isMainThread } from 'node:worker_threads';

const file = process.env.LOADED_MODULES_FILE;
if (file === undefined) throw new Error('set LOADED_MODULES_FILE');
// The main thread's modules only: a worker (which runs this preload too) is not the service.
if (isMainThread) record(file);

function record(/** @type {string} */ file) {
  register('./record-modules-hooks.mjs', import.meta.url, { data: { file } });
  process.on('exit', () => {
    const cache = /** @type {{ _cache: Record<string, unknown> }} */ (
      /** @type {unknown} */ (Module)
    )._cache;
    appendFileSync(
      file,
      Object.keys(cache)
        .map((path) => `${path}\n`)
        .join(''),
    );
  });
}
