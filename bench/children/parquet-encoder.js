// @ts-check
// A worker that encodes sealed Parquet columns as the exporter's worker will: encodeParquet with
// one reused zstd context (src/parquet/page-compressor.js). bench/parquet-writer.ts samples its
// heap while it works.
import { parentPort, workerData } from 'node:worker_threads';
import { encodeParquet } from '../../src/parquet/encode.js';
import { pageCompressor } from '../../src/parquet/page-compressor.js';

const port = parentPort;
if (port === null) throw new Error('parquet-encoder.js must run as a worker thread');
const compressPage = pageCompressor('zstd', 3, workerData.zstdEngine);
port.on(
  'message',
  async (/** @type {import('../../src/parquet/sealed.js').SealedColumns} */ sealed) => {
    const file = await encodeParquet(sealed, { compression: 'zstd', compressPage });
    port.postMessage(file.length);
  },
);
