// @ts-check
// A worker that encodes sealed Parquet columns as the exporter's worker will: encodeParquet with
// its page compressor (src/compression/compressors.js createPageCompressor). bench/parquet-writer.ts samples its
// heap while it works.
import { getHeapStatistics } from 'node:v8';
import { parentPort, workerData } from 'node:worker_threads';
import { createPageCompressor } from '../../src/compression/compressors.js';
import { encodeParquet } from '../../src/signals/metrics/parquet/encode.js';

const port = parentPort;
if (port === null) throw new Error('parquet-encoder.js must run as a worker thread');
const { compressPage } = createPageCompressor({
  compression: 'zstd',
  level: 3,
  engine: workerData.zstdEngine,
});
port.on(
  'message',
  async (
    /** @type {import('../../src/signals/metrics/parquet/sealed.js').SealedColumns} */ sealed,
  ) => {
    const file = await encodeParquet(sealed, { compression: 'zstd', compressPage });
    // The heap as the job leaves it, its garbage not collected yet: a sampler can miss a short
    // job's peak, and this is at least the peak of a job no collection ran in.
    const h = getHeapStatistics();
    port.postMessage({ bytes: file.length, heap: h.used_heap_size + h.external_memory });
  },
);
