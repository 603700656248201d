/**
 * Encode throughput of spans and log records: our OTLP encoders (the signal rows' records, with
 * the split by resource the exporter does first) beside the official JsonTraceSerializer /
 * JsonLogsSerializer and ProtobufTraceSerializer / ProtobufLogsSerializer, on the same batches of
 * SDK-made records (1,000 and 10,000 a batch), interleaved in the same rounds. Rates are per
 * second of the calling thread's CPU time where the runtime has it (process.threadCpuUsage, Node
 * ≥ 23.9), else wall clock. Before timing, our output of each batch is checked to decode (by
 * Google's protobuf runtime, against the official .proto files) to the official protobuf
 * serializer's message: a required target.
 */
import {
  JsonLogsSerializer,
  JsonTraceSerializer,
  ProtobufLogsSerializer,
  ProtobufTraceSerializer,
} from '@opentelemetry/otlp-transformer';
import { release } from '../src/encoding/handed-over.js';
import type { RecordFormat } from '../src/encoding/records.js';
import { logsExport } from '../src/signals/logs/export.js';
import type { SignalExport } from '../src/signals/signal.js';
import { tracesExport } from '../src/signals/traces/export.js';
import { logsReference, traceReference } from '../test/support/otlp-reference.js';
import { fmtMs, fmtNum, fmtPct, fmtRate } from './lib/format.js';
import { realisticLogRecords, realisticSpans } from './lib/realistic-signals.js';
import { emitResult, parseArgs, progress, type Table, type Target } from './lib/result.js';
import { collectGarbage, type Summary, summarize } from './lib/stats.js';
import { CALLING_THREAD_CPU, callingThreadCpuMicros } from './lib/thread-cpu.js';

const args = parseArgs(process.argv.slice(2));
const SIZES = [1_000, 10_000];
const ROUNDS = args.quick ? 3 : 7;
/** Batches of each contender per round: about 40,000 records' worth. */
const opsFor = (size: number) => Math.max(4, Math.round(40_000 / size));

type Contender = 'ours-json' | 'official-json' | 'ours-proto' | 'official-proto';
const CONTENDERS: Contender[] = ['ours-json', 'official-json', 'ours-proto', 'official-proto'];

interface Serializer<Item> {
  serializeRequest(items: Item): Uint8Array | undefined;
}

interface SignalCase<Item> {
  name: 'spans' | 'log records';
  row: SignalExport<Item>;
  officialJson: Serializer<Item>;
  officialProto: Serializer<Item>;
  reference: typeof traceReference;
}

const CPU_TIMED = CALLING_THREAD_CPU;
/** The calling thread's CPU in seconds (exact: callingThreadCpuMicros), else the wall clock. */
const threadCpuSeconds = (): number => {
  const micros = callingThreadCpuMicros();
  return micros === undefined ? performance.now() / 1000 : micros / 1e6;
};

let sink = 0;

/** Ours as the exporter runs it: split by resource, one record per part. */
function oursEncode<Item>(
  row: SignalExport<Item>,
  format: RecordFormat<Item>,
  batch: Item,
  outputs: Uint8Array[],
): void {
  row.splitByResource(batch, { part: (part) => outputs.push(format.encode(part)) });
}

/** Runs one contender on `batch`, its output bytes into `outputs`. */
function runOnce<Item>(
  c: SignalCase<Item>,
  contender: Contender,
  batch: Item,
  outputs: Uint8Array[],
): void {
  switch (contender) {
    case 'ours-json':
      oursEncode(c.row, c.row.records['otlp-json'], batch, outputs);
      break;
    case 'ours-proto':
      oursEncode(c.row, c.row.records['otlp-proto'], batch, outputs);
      break;
    case 'official-json':
      outputs.push(c.officialJson.serializeRequest(batch) ?? new Uint8Array());
      break;
    case 'official-proto':
      outputs.push(c.officialProto.serializeRequest(batch) ?? new Uint8Array());
      break;
  }
}

/**
 * After the clock: every contender's output is freed at once, as the exporter frees its records
 * once their body is made (releaseRecords), so megabytes of dead outputs do not wait for a
 * collection that would land on whichever contender runs then.
 */
function releaseOutputs(outputs: Uint8Array[]): void {
  for (const output of outputs) {
    sink += output.length;
    release(output.buffer);
  }
  outputs.length = 0;
}

/**
 * One round: `ops` batches of every contender, interleaved batch by batch (the order rotated at
 * every step), each timed on its own and summed per contender, so a slow spell of the machine
 * lands on every side of a ratio.
 */
async function round<Item>(
  c: SignalCase<Item>,
  batch: Item,
  ops: number,
): Promise<Record<Contender, { cpu: number; wall: number }>> {
  await collectGarbage();
  const cpu = new Map<Contender, number>(CONTENDERS.map((k) => [k, 0]));
  const wall = new Map<Contender, number>(CONTENDERS.map((k) => [k, 0]));
  const outputs: Uint8Array[] = [];
  for (let i = 0; i < ops; i++) {
    for (let k = 0; k < CONTENDERS.length; k++) {
      const contender = CONTENDERS[(k + i) % CONTENDERS.length] as Contender;
      const w0 = performance.now();
      const c0 = threadCpuSeconds();
      runOnce(c, contender, batch, outputs);
      const c1 = threadCpuSeconds();
      const w1 = performance.now();
      releaseOutputs(outputs);
      cpu.set(contender, (cpu.get(contender) ?? 0) + (c1 - c0));
      wall.set(contender, (wall.get(contender) ?? 0) + (w1 - w0) / 1000);
    }
  }
  return Object.fromEntries(
    CONTENDERS.map((k) => [k, { cpu: cpu.get(k) ?? 0, wall: wall.get(k) ?? 0 }]),
  ) as Record<Contender, { cpu: number; wall: number }>;
}

/** Bytes of our OTLP/JSON records of `batch`. */
function jsonBytes<Item>(c: SignalCase<Item>, batch: Item): number {
  const outputs: Uint8Array[] = [];
  oursEncode(c.row, c.row.records['otlp-json'], batch, outputs);
  return outputs.reduce((n, o) => n + o.length, 0);
}

/** 'same message', or where ours differs from the official protobuf serializer's message. */
function equivalence<Item>(c: SignalCase<Item>, batch: Item): string {
  const expected = JSON.stringify(
    c.reference.decodeProtobuf(c.officialProto.serializeRequest(batch) ?? new Uint8Array()),
  );
  const parts: Item[] = [];
  c.row.splitByResource(batch, { part: (part) => parts.push(part) });
  const proto = Buffer.concat(parts.map((part) => c.row.records['otlp-proto'].encode(part)));
  const jsonFormat = c.row.records['otlp-json'];
  const records = parts.map((part) => jsonFormat.encode(part));
  const json = jsonFormat.assemble(
    records,
    records.reduce((n, r) => n + r.length, 0),
  );
  if (JSON.stringify(c.reference.decodeProtobuf(proto)) !== expected) return 'protobuf DIFFERS';
  if (JSON.stringify(c.reference.decodeJsonExact(json.toString('utf8'))) !== expected) {
    return 'JSON DIFFERS';
  }
  return 'same message';
}

interface SizeResult {
  signal: string;
  size: number;
  ops: number;
  rates: Record<Contender, Summary>;
  jsonRatio: Summary;
  protoRatio: Summary;
  jsonWallRatio: Summary;
  jsonBytesPerRecord: number;
  equivalence: string;
}

async function measure<Item extends readonly unknown[]>(
  c: SignalCase<Item>,
  all: Item,
): Promise<SizeResult[]> {
  const out: SizeResult[] = [];
  for (const size of SIZES) {
    const batch = all.slice(0, size) as unknown as Item;
    const ops = opsFor(size);
    progress(
      `encode-signals: ${c.name}, ${fmtNum(size)} a batch: checking against the official serializer`,
    );
    const same = equivalence(c, batch);
    const cpuRates: Record<Contender, number[]> = {
      'ours-json': [],
      'official-json': [],
      'ours-proto': [],
      'official-proto': [],
    };
    const wallRates: Record<Contender, number[]> = {
      'ours-json': [],
      'official-json': [],
      'ours-proto': [],
      'official-proto': [],
    };
    await round(c, batch, ops); // warm-up: JIT, allocation sites, writer buffers
    for (let r = 0; r < ROUNDS; r++) {
      progress(`encode-signals: ${c.name}, ${fmtNum(size)} a batch, round ${r + 1}/${ROUNDS}`);
      const samples = await round(c, batch, ops);
      for (const k of CONTENDERS) {
        cpuRates[k].push((size * ops) / samples[k].cpu);
        wallRates[k].push((size * ops) / samples[k].wall);
      }
    }
    const paired = (ours: Contender, official: Contender, of: Record<Contender, number[]>) =>
      summarize(of[ours].map((v, i) => v / (of[official][i] as number)));
    const rates = cpuRates;
    out.push({
      signal: c.name,
      size,
      ops,
      rates: Object.fromEntries(CONTENDERS.map((k) => [k, summarize(rates[k])])) as Record<
        Contender,
        Summary
      >,
      jsonRatio: paired('ours-json', 'official-json', rates),
      protoRatio: paired('ours-proto', 'official-proto', rates),
      jsonWallRatio: paired('ours-json', 'official-json', wallRates),
      jsonBytesPerRecord: jsonBytes(c, batch) / size,
      equivalence: same,
    });
  }
  return out;
}

progress('encode-signals: making 10,000 spans and 10,000 log records with the SDKs');
const spans = await realisticSpans(Math.max(...SIZES));
const logRecords = await realisticLogRecords(Math.max(...SIZES));

const results = [
  ...(await measure(
    {
      name: 'spans',
      row: tracesExport,
      officialJson: JsonTraceSerializer,
      officialProto: ProtobufTraceSerializer,
      reference: traceReference,
    },
    spans,
  )),
  ...(await measure(
    {
      name: 'log records',
      row: logsExport,
      officialJson: JsonLogsSerializer,
      officialProto: ProtobufLogsSerializer,
      reference: logsReference,
    },
    logRecords,
  )),
];

const fmtRatio = (s: Summary) =>
  `${s.median.toFixed(2)}× (${s.min.toFixed(2)}–${s.max.toFixed(2)})`;
const LABEL: Record<Contender, string> = {
  'ours-json': 'ours, otlp-json',
  'official-json': 'official Json*Serializer',
  'ours-proto': 'ours, otlp-proto',
  'official-proto': 'official Protobuf*Serializer',
};
const rateTable: Table = {
  columns: [
    'signal',
    'batch',
    'contender',
    CPU_TIMED ? "records/s of the thread's CPU (median)" : 'records/s (median)',
    'spread',
    'ms per batch',
  ],
  rows: results.flatMap((r) =>
    CONTENDERS.map((k) => [
      r.signal,
      fmtNum(r.size),
      LABEL[k],
      fmtRate(r.rates[k].median),
      fmtPct(r.rates[k].spreadPct),
      fmtMs((r.size / r.rates[k].median) * 1000),
    ]),
  ),
};
const ratioTable: Table = {
  columns: [
    'signal',
    'batch',
    'JSON: ours / official (rounds)',
    'JSON, wall clock',
    'protobuf: ours / official (rounds)',
    'our JSON bytes per record',
    'equivalence',
  ],
  rows: results.map((r) => [
    r.signal,
    fmtNum(r.size),
    fmtRatio(r.jsonRatio),
    fmtRatio(r.jsonWallRatio),
    fmtRatio(r.protoRatio),
    r.jsonBytesPerRecord.toFixed(0),
    r.equivalence,
  ]),
};
const targets: Target[] = [
  ...results.map((r) => ({
    name: `encode ${r.signal}, ${fmtNum(r.size)} a batch: ours-json vs official JSON serializer`,
    measured: `${r.jsonRatio.median.toFixed(2)}× (rounds ${r.jsonRatio.min.toFixed(2)}–${r.jsonRatio.max.toFixed(2)}×; ${fmtRate(r.rates['ours-json'].median)} vs ${fmtRate(r.rates['official-json'].median)} records/s)`,
    threshold: '≥ 2×',
    pass: r.jsonRatio.median >= 2,
  })),
  ...results.map((r) => ({
    name: `output equivalence, ${r.signal}, ${fmtNum(r.size)} a batch (json, proto vs official protobuf)`,
    measured: r.equivalence,
    threshold: 'same message',
    pass: r.equivalence === 'same message',
    required: true,
  })),
];
for (const r of results) {
  if (r.equivalence !== 'same message') console.error(`FAILURE: ${r.signal}: ${r.equivalence}`);
}
emitResult({
  suite: 'encode-signals',
  title: 'Encode spans and log records (our encoders vs the official serializers, same run)',
  tables: [rateTable, ratioTable],
  targets,
  notes: [
    'Spans: HTTP server spans made by a TracerProvider (12 semantic-convention attributes, the status code, one event with 2 attributes, a resource of 15 attributes). Log records: made by a LoggerProvider, a string body, 5 attributes, severity, trace context, the same resource.',
    "Ours: the exporter's work before the buffer: splitByResource, then the row's record of each part (one part here). Official: serializeRequest of the whole batch.",
    'Ratios: median of the per-round ratios, with the lowest and highest round. A round interleaves the contenders batch by batch (the order rotated at every step), so a slow spell of the machine lands on both sides of a ratio.',
    CPU_TIMED
      ? "Rates per second of the calling thread's own CPU time (process.threadCpuUsage); the wall-clock JSON ratio beside."
      : 'Rates per second of wall-clock time (this runtime has no process.threadCpuUsage).',
    `${ROUNDS} rounds after a warm-up round; ${results
      .filter((r) => r.signal === 'spans')
      .map((r) => `${r.ops} batches of every contender at ${fmtNum(r.size)}`)
      .join(', ')} per round; spread = (max − min) / median over the rounds.`,
    `sink ${sink > 0 ? 'ok' : 'empty'}`,
  ],
  data: { rounds: ROUNDS, results },
});
