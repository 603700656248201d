/**
 * Spans and log records as Parquet against OTLP/JSON + zstd, the exporter's two bodies of one
 * batch: bytes per item, and CPU per item from the exports to the body (Parquet: appending each
 * export to the column builders, sealing, sorting and encoding the file with zstd pages;
 * OTLP/JSON: encoding each export's record and compressing the batch). Both at zstd level 3 (the
 * default), on batches of realistic SDK-made spans and log records (bench/lib/realistic-signals)
 * handed over 512 at a time, as a BatchSpanProcessor does. Interleaved rounds after warm-up rounds, medians. CPU is
 * that of the threads that do the work (bench/lib/thread-groups: this thread, and libuv's pool,
 * where the OTLP body's zstd runs, as in the exporter; Parquet's pages are compressed on this
 * thread, as in the exporter's body worker), with this thread's alone and every thread's
 * (process.cpuUsage: V8's helper threads too, which here mostly finish the forced collections
 * between measurements) beside it. Targets: issue 33's (bytes at most 0.6×, CPU at most 1.5×
 * OTLP/JSON + zstd), on the working threads' CPU.
 */
import { createPageCompressor, partsCompressor } from '../src/compression/compressors.js';
import { newTally } from '../src/encoding/records.js';
import { flatEncoder } from '../src/signals/flat-parquet/table.js';
import { logsExport } from '../src/signals/logs/export.js';
import { LOG_RECORDS } from '../src/signals/logs/parquet-schema.js';
import type { ColumnBuilders, SignalExport } from '../src/signals/signal.js';
import { tracesExport } from '../src/signals/traces/export.js';
import { SPANS } from '../src/signals/traces/parquet-schema.js';
import { fmtNum } from './lib/format.js';
import { realisticLogRecords, realisticSpans } from './lib/realistic-signals.js';
import { emitResult, parseArgs, progress, type Target } from './lib/result.js';
import { collectGarbage, median } from './lib/stats.js';
import { threadCpuBetween, threadSnapshot } from './lib/thread-groups.js';

const args = parseArgs(process.argv.slice(2));
const BATCH = 10_000;
const EXPORT = 512;
const ROUNDS = args.quick ? 3 : 15;
/**
 * Rounds of each format first, not counted: V8 compiles a function while it runs, and Parquet's
 * many small passes take a few batches of 10,000 spans to reach their steady cost (15 µs a span
 * in the first, 6–7 from the fourth, at 0fd5467) where OTLP/JSON takes fewer. That compiling is
 * paid once a process, not per item (parquet-peak's process CPU counts it); the first batch's
 * CPU is reported beside.
 */
const WARMUP = args.number('warmup', args.quick ? 1 : 8);
const ENGINE = 'node:zlib' as const;

const threadCpu = (process as { threadCpuUsage?: () => NodeJS.CpuUsage }).threadCpuUsage;
const threadSeconds = (): number => {
  if (threadCpu === undefined) return performance.now() / 1000;
  const u = threadCpu.call(process);
  return (u.user + u.system) / 1e6;
};
const processSeconds = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

interface Case {
  name: 'spans' | 'log records';
  row: SignalExport<readonly never[]>;
  spec: typeof SPANS;
  items: readonly unknown[];
}

const exportsOf = (items: readonly unknown[]) => {
  const out: unknown[][] = [];
  for (let i = 0; i < items.length; i += EXPORT) out.push(items.slice(i, i + EXPORT));
  return out as never[][];
};

async function parquetBody(c: Case, exports: never[][]): Promise<number> {
  const builders = (await c.row.loadColumns())() as ColumnBuilders<readonly never[]>;
  for (const e of exports) builders.append(e, newTally(true));
  const pages = createPageCompressor({ compression: 'zstd', level: 3, engine: ENGINE });
  const encode = flatEncoder(c.spec);
  const file = await encode(builders.seal() as never, {
    compression: 'zstd',
    compressPage: pages.compressPage,
  });
  pages.close();
  return file.length;
}

async function jsonBody(c: Case, exports: never[][]): Promise<number> {
  const format = c.row.records['otlp-json'];
  const records: Buffer[] = [];
  for (const e of exports) {
    c.row.splitByResource(e, { part: (part) => records.push(format.encode(part)) });
  }
  const zstd = partsCompressor({ compression: 'zstd', level: 3, engine: ENGINE });
  const body = await zstd.compress([
    format.assemble(
      records,
      records.reduce((n, r) => n + r.length, 0),
    ),
  ]);
  zstd.close();
  return body.length;
}

const cases: Case[] = [
  {
    name: 'spans',
    row: tracesExport as unknown as SignalExport<readonly never[]>,
    spec: SPANS,
    items: await realisticSpans(BATCH),
  },
  {
    name: 'log records',
    row: logsExport as unknown as SignalExport<readonly never[]>,
    spec: LOG_RECORDS,
    items: await realisticLogRecords(BATCH),
  },
];

const rows: string[][] = [];
const targets: Target[] = [];
const data: Record<string, unknown> = {};
const firsts: string[] = [];
for (const c of cases) {
  const exports = exportsOf(c.items);
  const cpu = { parquet: [] as number[], json: [] as number[] };
  const thread = { parquet: [] as number[], json: [] as number[] };
  const every = { parquet: [] as number[], json: [] as number[] };
  const bytes = { parquet: 0, json: 0 };
  const first = { parquet: 0, json: 0 };
  for (let round = -WARMUP; round < ROUNDS; round++) {
    progress(
      round < 0
        ? `parquet-signals: ${c.name}, warming up ${round + WARMUP + 1}/${WARMUP}`
        : `parquet-signals: ${c.name}, round ${round + 1}/${ROUNDS}`,
    );
    for (const kind of round % 2 === 0
      ? (['parquet', 'json'] as const)
      : (['json', 'parquet'] as const)) {
      await collectGarbage();
      const t0 = threadSeconds();
      const p0 = processSeconds();
      const s0 = threadSnapshot();
      bytes[kind] = kind === 'parquet' ? await parquetBody(c, exports) : await jsonBody(c, exports);
      const groups = threadCpuBetween(s0, threadSnapshot());
      const t1 = threadSeconds();
      // Without /proc (not Linux): this thread's, which leaves out the OTLP body's zstd.
      const working =
        groups === undefined ? (t1 - t0) / BATCH : (groups.main + groups.pool) / 1000 / BATCH;
      if (round === -WARMUP) first[kind] = working;
      if (round < 0) continue;
      every[kind].push((processSeconds() - p0) / BATCH);
      thread[kind].push((t1 - t0) / BATCH);
      cpu[kind].push(working);
    }
  }
  const perItem = { parquet: bytes.parquet / BATCH, json: bytes.json / BATCH };
  const cpuRatio = median(cpu.parquet) / median(cpu.json);
  const threadRatio = median(thread.parquet) / median(thread.json);
  const everyRatio = median(every.parquet) / median(every.json);
  const bytesRatio = perItem.parquet / perItem.json;
  rows.push([
    c.name,
    fmtNum(perItem.parquet),
    fmtNum(perItem.json),
    `${bytesRatio.toFixed(2)}×`,
    `${fmtNum(median(cpu.parquet) * 1e6)} µs`,
    `${fmtNum(median(cpu.json) * 1e6)} µs`,
    `${cpuRatio.toFixed(2)}×`,
    `${fmtNum(median(thread.parquet) * 1e6)} µs`,
    `${fmtNum(median(thread.json) * 1e6)} µs`,
    `${threadRatio.toFixed(2)}×`,
    `${fmtNum(median(every.parquet) * 1e6)} µs`,
    `${fmtNum(median(every.json) * 1e6)} µs`,
    `${everyRatio.toFixed(2)}×`,
  ]);
  targets.push(
    {
      name: `${c.name}: bytes per item, Parquet ÷ OTLP/JSON + zstd`,
      measured: `${bytesRatio.toFixed(2)}× (${fmtNum(perItem.parquet)} B against ${fmtNum(perItem.json)} B)`,
      threshold: '≤ 0.6×',
      pass: bytesRatio <= 0.6,
    },
    {
      name: `${c.name}: CPU per item to the body, Parquet ÷ OTLP/JSON + zstd`,
      measured: `${cpuRatio.toFixed(2)}×`,
      threshold: '≤ 1.5×',
      pass: cpuRatio <= 1.5,
    },
  );
  firsts.push(
    `${c.name}: Parquet ${fmtNum(first.parquet * 1e6)} µs, OTLP/JSON + zstd ${fmtNum(first.json * 1e6)} µs (${(first.parquet / first.json).toFixed(2)}×)`,
  );
  data[c.name] = { bytes, cpu, thread, every, first };
}

emitResult({
  suite: 'parquet-signals',
  title: `Spans and log records: Parquet against OTLP/JSON + zstd (batches of ${fmtNum(BATCH)}, exports of ${EXPORT}, zstd level 3)`,
  tables: [
    {
      columns: [
        'items',
        'Parquet B/item',
        'OTLP/JSON+zstd B/item',
        'bytes ratio',
        'Parquet CPU/item',
        'JSON+zstd CPU/item',
        'CPU ratio',
        'Parquet: this thread',
        'JSON+zstd: this thread',
        'this thread ratio',
        'Parquet: every thread',
        'JSON+zstd: every thread',
        'every thread ratio',
      ],
      rows,
    },
  ],
  targets,
  notes: [
    `Medians of ${ROUNDS} interleaved rounds each, after ${WARMUP} rounds of each format not counted (V8 compiling Parquet’s passes: a cost per process, not per item). The process’s first batch, CPU/item: ${firsts.join('; ')}.`,
    'CPU/item (the target’s) is this thread’s and libuv’s pool’s (per-thread schedstat): Parquet’s encoding and page compression run on this thread (in the exporter: its body worker); the OTLP body’s zstd runs on the pool, as in the exporter. “Every thread” adds V8’s helper threads (process.cpuUsage), which here mostly finish the forced garbage collections made before each measurement, for both formats.',
    threadCpu === undefined
      ? '“This thread” is wall clock (no process.threadCpuUsage here).'
      : '“This thread” is the calling thread’s alone (process.threadCpuUsage): it leaves out the OTLP body’s zstd on the pool.',
  ],
  data,
});
