/**
 * Run with `--require test/support/no-zstd.cjs` (a runtime with no zstd engine): prints one JSON
 * line with what compression 'zstd' and compression 'gzip' do there.
 */
import { createBodyMaker } from '../../../src/body/body-maker.js';

function failure(f: () => unknown): { name: string; message: string } | null {
  try {
    f();
    return null;
  } catch (error) {
    return { name: (error as Error).name, message: (error as Error).message };
  }
}

const gzip = createBodyMaker({ body: 'framed', compression: 'gzip', level: 6 });
const made = await gzip.make({
  records: [Buffer.from('gzip still works')],
  framing: null,
  sha256: false,
  crc32: false,
});
await gzip.close();
console.log(
  JSON.stringify({
    compress: failure(() => createBodyMaker({ body: 'framed', compression: 'zstd', level: 3 })),
    gzipBytes: made.body.length,
  }),
);
