// @ts-check
// Worker thread that owns one reused zstd compression context: zstd-napi compresses on the
// calling thread, so running it here keeps the exporter's event loop free. Plain JavaScript so
// the same file runs from src/ (tests) and dist/ (the package).
import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';

const require = createRequire(import.meta.url);
/** @type {typeof import('zstd-napi')} */
const zstd = require('zstd-napi');

const compressor = new zstd.Compressor();
compressor.setParameters({ compressionLevel: workerData.level });

const port = parentPort;
if (port === null) throw new Error('zstd-worker.js must run as a worker thread');

port.on('message', (/** @type {{ id: number, data: ArrayBuffer }} */ job) => {
  try {
    const compressed = compressor.compress(new Uint8Array(job.data));
    // The result may share memory with a scratch or pooled buffer: copy it into memory of its
    // own before transferring it.
    const out = new Uint8Array(compressed.length);
    out.set(compressed);
    port.postMessage({ id: job.id, data: out.buffer }, [out.buffer]);
  } catch (error) {
    // Give the input back so the caller still owns its bytes.
    port.postMessage({ id: job.id, error: String(error), data: job.data }, [job.data]);
  }
});
