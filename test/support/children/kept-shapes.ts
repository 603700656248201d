/**
 * Child of test/unit/parquet/kept-shapes.test.ts, run with --allow-natives-syntax and
 * --expose-gc: makes batches of spans into Parquet files until the hot functions of the column
 * store and the writer are optimized, lets every batch object go, collects garbage in full, and
 * prints which of those functions were optimized before and which still are after.
 */
import { newTally } from '../../../src/encoding/records.js';
import { BitPacker } from '../../../src/parquet/bit-packer.js';
import { ByteWriter } from '../../../src/parquet/byte-writer.js';
import { dictionaryOfIds } from '../../../src/parquet/dictionaries.js';
import { Strings } from '../../../src/parquet/tables.js';
import { FlatStore } from '../../../src/signals/flat-parquet/store.js';
import { flatEncoder } from '../../../src/signals/flat-parquet/table.js';
import { spanColumnBuilders } from '../../../src/signals/traces/parquet.js';
import { SPANS } from '../../../src/signals/traces/parquet-schema.js';
import { handBuiltSpan } from '../readable-span.js';

// V8's own status of a function; bit 4 (16): optimized, by Maglev or TurboFan.
const status = new Function('f', 'return %GetOptimizationStatus(f)') as (f: unknown) => number;
const OPTIMIZED = 16;
const gc = (globalThis as { gc?: () => void }).gc as () => void;

const resource = { attributes: { 'service.name': 'checkout' } };
const scope = { name: 'http' };
const hex = (n: number, digits: number) => n.toString(16).padStart(digits, '0');
const spans = Array.from({ length: 2_000 }, (_, i) =>
  handBuiltSpan({
    name: `GET /items/${i % 7}`,
    spanContext: () => ({ traceId: hex(i * 7919, 32), spanId: hex(i + 1, 16), traceFlags: 1 }),
    startTime: [1_700_000_000, i * 1000],
    endTime: [1_700_000_000, i * 1000 + 500],
    resource,
    instrumentationScope: scope,
    attributes: { 'url.path': `/items/${i}`, 'http.response.status_code': 200 + (i % 3) },
    events: [{ time: [1_700_000_000, i * 1000 + 1], name: 'handled', attributes: { n: i } }],
  }),
);

async function batch(): Promise<void> {
  const builders = spanColumnBuilders();
  for (let i = 0; i < spans.length; i += 500)
    builders.append(spans.slice(i, i + 500), newTally(false));
  await flatEncoder(SPANS)(builders.seal(), { compression: 'none' });
}

const hot: Record<string, unknown> = {
  'FlatStore#text': FlatStore.prototype.text,
  'FlatStore#string': FlatStore.prototype.string,
  'Strings#id': Strings.prototype.id,
  'ByteWriter#reserve': ByteWriter.prototype.reserve,
  'BitPacker#repeat': BitPacker.prototype.repeat,
  dictionaryOfIds,
};
const optimized = () =>
  Object.entries(hot)
    .filter(([, f]) => (status(f) & OPTIMIZED) !== 0)
    .map(([name]) => name);

// Until every one is optimized (V8 compiles on helper threads: later on a busy machine).
for (let round = 0; round < 40 || (round < 1_000 && optimized().length < 6); round++) await batch();
const before = optimized();
// Nothing of a batch is left: a full collection now is one between two batches.
gc();
await new Promise((resolve) => setImmediate(resolve));
gc();
process.stdout.write(`${JSON.stringify({ before, after: optimized() })}\n`);
