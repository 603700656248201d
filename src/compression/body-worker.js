// @ts-check
// Worker thread that turns a sealed batch's records into the bytes to upload: the body of its
// format (bodies.js: framed and compressed, or a Parquet file; zstd on the engine the main
// thread chose, see zstd-compressors.js) and the checksums the S3 request needs (SHA-256 for
// SigV4, CRC32 when the client sends one). All of it is CPU work on megabytes that would otherwise stall the exporter's event loop.
// Plain JavaScript, so the same file runs from src/ (tests) and dist/ (the package).
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { bodyMaker } from './bodies.js';

const require = createRequire(import.meta.url);
const makeBody = bodyMaker(/** @type {import('./bodies.js').BodyOptions} */ (workerData));

/** @typedef {{ head: string, separator: string, tail: string } | null} Framing */
/** @typedef {{ id: number, records: ArrayBuffer[], lengths: number[], framing: Framing, sha256: boolean, crc32: boolean }} Job */

const port = parentPort;
if (port === null) throw new Error('body-worker.js must run as a worker thread');

/** Niceness of this thread on Linux: below the service's threads, never starved (CFS weights ~1:10). */
const WORKER_NICE = 10;

/**
 * Compression is background work. On Linux a thread has a priority of its own, so this one
 * steps back: when the cores are busy (the service, an S3 server on the same host), the event
 * loop gets a core before the compressor does. Only on Linux: there setpriority() on "0" means
 * the calling thread; elsewhere it would mean the whole process.
 */
function stepBack() {
  if (process.platform !== 'linux') return;
  try {
    setPriority(0, WORKER_NICE);
  } catch {
    // Not allowed here (a sandbox): same priority as the service.
  }
}
stepBack();

/**
 * The records a job received die young, but only a collection frees their megabytes, and this
 * worker allocates little on its own heap: left alone, it would hold tens of megabytes of dead
 * records until external-memory pressure forced a full collection. Filling the (small) young
 * generation with short-lived objects makes V8 scavenge now, cheaply, off the main thread.
 */
function nudgeScavenge() {
  /** @type {unknown[]} */
  let junk = [];
  for (let i = 0; i < 20_000; i++) junk.push({ i });
  junk = [];
  return junk.length;
}

/** CRC32 (IEEE) as S3 wants it: big-endian, base64. */
function crc32Base64(/** @type {Uint8Array} */ body) {
  const { crc32 } = require('@node-rs/crc32');
  const out = Buffer.alloc(4);
  out.writeUInt32BE(crc32(Buffer.from(body.buffer, body.byteOffset, body.byteLength)) >>> 0);
  return out.toString('base64');
}

// Asynchronous for node:zlib's zstd (libuv's pool): its compressor queues jobs one at a time, so
// replies keep the order of the jobs; every other compression finishes before the first await.
port.on('message', async (/** @type {Job} */ job) => {
  try {
    const records = job.records.map((buffer, i) => new Uint8Array(buffer, 0, job.lengths[i]));
    const body = await makeBody({ records, framing: job.framing });
    const sha256 = job.sha256 ? createHash('sha256').update(body).digest('hex') : undefined;
    const crc32 = job.crc32 ? crc32Base64(body) : undefined;
    const buffer = /** @type {ArrayBuffer} */ (body.buffer);
    port.postMessage({ id: job.id, body: buffer, sha256, crc32 }, [buffer]);
    nudgeScavenge();
  } catch (error) {
    // Give the records back so the caller still owns its bytes.
    port.postMessage(
      { id: job.id, error: String(error), records: job.records, lengths: job.lengths },
      job.records,
    );
  }
});
