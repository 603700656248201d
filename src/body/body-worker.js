// @ts-check
// Worker thread that turns a sealed batch into the bytes to upload, for the work that
// would otherwise stall the exporter's event loop: a Parquet file, or zstd through the zstd-napi
// addon (which runs on the calling thread). It makes the body of its format (bodies.js, on the
// engine the main thread chose) and the checksums the S3 request needs (checksums.js). Plain
// JavaScript, so the same file runs from src/ (tests) and dist/ (the package).
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { crc32Base64, sha256Hex } from '../compression/checksums.js';
import { bodyMaker } from './bodies.js';

// Not a top-level await: the CommonJS build of this file has none.
const bodies = bodyMaker(/** @type {import('./bodies.js').BodyOptions} */ (workerData));
// A maker that cannot be set up (a module or an addon that does not load here) fails each job,
// which gives its batch back (run()); left unhandled, the rejection would kill this worker
// before the first job, and the batch it had been handed with it.
bodies.catch(() => {});

/** @typedef {{ head: string, separator: string, tail: string } | null} Framing */
/**
 * A batch to make a body of: its records (framed formats) or its sealed columns (Parquet).
 * @typedef {{
 *   id: number,
 *   records?: ArrayBuffer[],
 *   lengths?: number[],
 *   framing: Framing,
 *   columns?: import('../signals/signal.js').TransferableColumns,
 *   sha256: boolean,
 *   crc32: boolean,
 * }} Job
 */

if (parentPort === null) throw new Error('body-worker.js must run as a worker thread');
const port = parentPort;

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

/**
 * Frees the memory a job received (its columns or records) once its body is made, as release()
 * in src/encoding/handed-over.ts does on the main thread: detaching an ArrayBuffer
 * (`ArrayBuffer.prototype.transfer(0)`, Node.js >= 22) frees its backing store at once; without
 * it the buffers wait for the collector, as before. They arrived by transfer, so nothing else
 * holds them. Left to the collector they outlive the job by many batches: the job's own
 * allocations promote them out of the young generation, and this worker's heap hardly grows, so
 * the full collection that frees them is rare (the worker's external memory grew by each batch's
 * columns, issue 36).
 * @param {Job} job
 */
function release(job) {
  for (const buffer of job.columns?.transfer ?? job.records ?? []) {
    // Empty: already detached (sent back as the body, say).
    if (buffer.byteLength === 0) continue;
    /** @type {{ transfer?: (length: number) => ArrayBuffer }} */ (buffer).transfer?.(0);
  }
}

/** Jobs run one after another, so replies keep the order of the jobs. */
let queue = Promise.resolve();

port.on('message', (/** @type {Job} */ job) => {
  queue = queue.then(() => run(job));
});

async function run(/** @type {Job} */ job) {
  try {
    const body = await make(job);
    const sha256 = job.sha256 ? await sha256Hex(body) : undefined;
    const crc32 = job.crc32 ? crc32Base64(body) : undefined;
    const buffer = /** @type {ArrayBuffer} */ (body.buffer);
    port.postMessage({ id: job.id, body: buffer, sha256, crc32 }, [buffer]);
    release(job);
    nudgeScavenge();
  } catch (error) {
    // Give the batch back so the caller still owns it (and can store it another way).
    const { id, columns, records, lengths } = job;
    if (columns !== undefined) {
      port.postMessage({ id, error: String(error), columns }, columns.transfer);
    } else {
      port.postMessage({ id, error: String(error), records, lengths }, records ?? []);
    }
  }
}

/** The body of a job: its sealed columns as Parquet, or its records framed and compressed. */
async function make(/** @type {Job} */ job) {
  const maker = await bodies;
  if (job.columns !== undefined) {
    return /** @type {import('./bodies.js').ColumnBodies} */ (maker).make({ columns: job.columns });
  }
  const { records = [], lengths = [] } = job;
  return /** @type {import('./bodies.js').Bodies} */ (maker).make({
    records: records.map((buffer, i) => new Uint8Array(buffer, 0, lengths[i])),
    framing: job.framing,
  });
}
