import fc from 'fast-check';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { nodeDirFiles } from '../../../src/compact/dir-store.js';
import type { CompactionReport, CompactMetricsOptions } from '../../../src/compact/index.js';
import type { Format } from '../../../src/index.js';
import {
  compactLogRecords,
  compactMetrics,
  compactSpans,
  dataPointRows,
  logRecordRows,
  readLogRecords,
  readMetrics,
  readSpans,
  spanRows,
} from '../../../src/reader.js';
import { batchAt } from '../../support/compaction-data.js';
import { dirClient, exportToDir } from '../../support/compaction-dir.js';
import { exportLogBatches, exportSpanBatches } from '../../support/flat-batches.js';
import { makeTempDir, removeDir } from '../../support/temp-dir.js';
import { SETTLED_HOUR as HOUR, HOUR_MS } from '../../support/time.js';

/**
 * The compactor's promise under any order of runs (docs/parquet.md, "Compaction" and "Never a
 * point lost, never one twice"): random sequences of exports (every format, late objects into
 * compacted hours) and runs (in place, to another prefix, deleting OTLP inputs, small targets,
 * stopped after any number of writes) over one or two hours of a directory store. After each
 * step the reader reads both prefixes, and each gives every item at most once, every item is
 * given by one of them, and:
 * - raw/ gives every item exported under it once, as long as no run to lake/ took its hour (such
 *   a run moves the hour's Parquet files, and with deleteInputs its OTLP objects, to lake/);
 * - raw/ keeps every item of its OTLP objects unless a run to lake/ with deleteInputs took them,
 *   or a run in place with deleteInputs put them in an output that a run to lake/ then took;
 * - lake/ gives every item of an hour once after a run to lake/ that was not stopped, until a
 *   late object arrives, for the hours no run in place took (those stay under raw/).
 */

type Signal = 'metrics' | 'traces' | 'logs';
type Step =
  | { kind: 'export'; hour: 0 | 1; format: Format; big: boolean }
  | {
      kind: 'compact';
      out: 'raw' | 'lake';
      deleteInputs: boolean;
      small: boolean;
      /** The run stops (every later write of it fails) after this many file writes. */
      stopAfter: number | undefined;
    };

const FORMATS: Format[] = ['otlp-json', 'otlp-proto', 'parquet'];
const exportStep: fc.Arbitrary<Step> = fc.record({
  kind: fc.constant('export' as const),
  hour: fc.constantFrom(0 as const, 1 as const),
  format: fc.constantFrom(...FORMATS),
  // Now and then two objects of about 45 KB compacted each: two outputs of a 64 KiB target.
  big: fc.nat({ max: 3 }).map((n) => n === 3),
});
const compactStep: fc.Arbitrary<Step> = fc.record({
  kind: fc.constant('compact' as const),
  out: fc.constantFrom('raw' as const, 'lake' as const),
  deleteInputs: fc.boolean(),
  small: fc.boolean(),
  // Half the runs stop: most runs make 15 to 50 writes.
  stopAfter: fc.option(fc.oneof(fc.nat({ max: 12 }), fc.nat({ max: 48 })), {
    nil: undefined,
    freq: 2,
  }),
});
/** An export first (a run before any is a run over nothing), then exports and runs. */
const steps = fc
  .tuple(exportStep, fc.array(fc.oneof(exportStep, compactStep, compactStep), { maxLength: 6 }))
  .map(([first, rest]) => [first, ...rest]);

const otlpExport: Step = { kind: 'export', hour: 0, format: 'otlp-json', big: false };
const run = (out: 'raw' | 'lake'): Step => ({
  kind: 'compact',
  out,
  deleteInputs: false,
  small: false,
  stopAfter: undefined,
});
const REPEATED = [otlpExport, run('raw'), run('raw')];
const TWO_COPIES = [otlpExport, run('lake'), run('raw'), run('lake')];

const COMPACT = { metrics: compactMetrics, traces: compactSpans, logs: compactLogRecords };

/** Microseconds of an ISO time with nanoseconds, as text (Parquet keeps microseconds). */
const micros = (iso: string) =>
  String(BigInt(Date.parse(`${iso.slice(0, 23)}Z`)) * 1000n + BigInt(iso.slice(23, 26) || '0'));

/** An item's identity: a point, a span, a log record. */
async function itemsUnder(dir: string, signal: Signal, prefix: string): Promise<string[]> {
  const items: string[] = [];
  const unreadable: string[] = [];
  const options = { dir, prefix, onError: (e: { key: string }) => void unreadable.push(e.key) };
  if (signal === 'metrics') {
    for await (const o of readMetrics(options))
      for (const p of dataPointRows(o.request))
        items.push(
          `${p.resource['service.name']}|${p.metric}|${p.attributes.route}|${p.time.slice(0, 23)}`,
        );
  } else if (signal === 'traces') {
    for await (const o of readSpans(options))
      for (const s of spanRows(o.request)) items.push(`${s.traceId}|${s.spanId}`);
  } else {
    for await (const o of readLogRecords(options))
      for (const r of logRecordRows(o.request)) items.push(`${r.service}|${micros(r.time)}`);
  }
  expect(unreadable, `unreadable under ${prefix}/`).toEqual([]);
  return items;
}

/**
 * Exports one object of `signal` (two large ones when `big`) into `dir` under raw/: the
 * identities of its items.
 */
async function exportOne(
  dir: string,
  signal: Signal,
  n: number,
  hour: number,
  format: Format,
  big: boolean,
): Promise<string[]> {
  const service = `s${n}`;
  const minute = 3 + n;
  if (signal === 'metrics') {
    const time = hour + minute * 60_000 + 7;
    const batches = big
      ? [batchAt(service, time, 4500, n), batchAt(`${service}b`, time, 4500, n)]
      : [batchAt(service, time, 2, n)];
    await exportToDir(dir, { prefix: 'raw', format }, batches);
    const iso = new Date(time).toISOString().slice(0, 23);
    return batches.flatMap((b) =>
      b.points.map((p) => `${p.service}|${p.metric}|${p.attributes.route}|${iso}`),
    );
  }
  const where = { bucket: 'b', prefix: 'raw', format };
  const items = signal === 'traces' ? 1200 : 1500;
  const batches = big
    ? [
        { service, minute, items, seed: n },
        { service: `${service}b`, minute, items, seed: n + 1000 },
      ]
    : [{ service, minute, items: 3, seed: n }];
  const s3 = { s3Client: dirClient(dir) };
  if (signal === 'traces') {
    const spelled = await exportSpanBatches(where, s3, hour, batches);
    return spelled.map((text) => {
      const [, traceId, spanId] = JSON.parse(text) as string[];
      return `${traceId}|${spanId}`;
    });
  }
  const spelled = await exportLogBatches(where, s3, hour, batches);
  return spelled.map((text) => {
    const [svc, , , time] = JSON.parse(text) as string[];
    return `${svc}|${time}`;
  });
}

/** Each item of `items` as often as it is there. */
const counts = (items: string[]) => {
  const map = new Map<string, number>();
  for (const i of items) map.set(i, (map.get(i) ?? 0) + 1);
  return map;
};
const sorted = (items: Iterable<string>) => [...items].sort();

/**
 * Every later file write of the directory store fails once `limit` have been made: a run
 * stopped there, whose lease and half-done work stay as they are. Returns whether it stopped.
 */
function stopAfterWrites(limit: number): { stopped: () => boolean; restore: () => void } {
  const saved = { ...nodeDirFiles };
  let writes = 0;
  let stopped = false;
  const gate =
    <A extends unknown[]>(f: (...args: A) => Promise<void>) =>
    async (...args: A) => {
      if (writes++ >= limit) {
        stopped = true;
        throw new Error('stopped');
      }
      return f(...args);
    };
  nodeDirFiles.writeFile = gate(saved.writeFile);
  nodeDirFiles.link = gate(saved.link);
  nodeDirFiles.rename = gate(saved.rename);
  nodeDirFiles.unlink = gate(saved.unlink);
  return { stopped: () => stopped, restore: () => Object.assign(nodeDirFiles, saved) };
}

describe('compaction under any order of runs', () => {
  const realNow = Date.now.bind(Date);
  afterEach(() => vi.restoreAllMocks());

  // Ten sequences of up to 7 steps and two fixed ones, a few small objects each (large ones now
  // and then): 3-10 s, more on a loaded machine (not a bound).
  test('each prefix gives every item exactly once: before, during (a run stopped at any write) and after compaction', {
    timeout: 120_000,
  }, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<Signal>('metrics', 'traces', 'logs'),
        steps,
        async (signal, steps) => {
          const dir = await makeTempDir('otel-s3-compact-model-');
          // A stopped run's lease holds its hour: the clock goes past it for the next run.
          let skew = 0;
          vi.spyOn(Date, 'now').mockImplementation(() => realNow() + skew);
          try {
            await runSteps(dir, signal, steps, () => {
              skew += 120_000;
            });
          } finally {
            vi.restoreAllMocks();
            await removeDir(dir);
          }
        },
      ),
      // Beside the random sequences, two of docs/parquet.md every time: a repeated run, and an
      // hour of OTLP objects compacted to lake/, in place, then to lake/ again.
      {
        numRuns: 10,
        examples: [
          ['metrics', REPEATED],
          ['metrics', TWO_COPIES],
        ],
      },
    );
  });
});

/**
 * Runs `steps` over `dir` and checks both prefixes after each (see the top of this file);
 * `passLeases` puts the clock past the leases a stopped run left.
 */
async function runSteps(
  dir: string,
  signal: Signal,
  steps: Step[],
  passLeases: () => void,
): Promise<void> {
  const exported: [string[], string[]] = [[], []];
  const otlp: [string[], string[]] = [[], []];
  const lakeTook = [false, false];
  /** The hour's OTLP objects may have been deleted, their items moved to lake/. */
  const otlpMoved = [false, false];
  /**
   * A run in place with deleteInputs took the hour: its output, then their only copy under raw/,
   * is a Parquet input of the next run to lake/, which moves it there (with late objects).
   */
  const inPlaceDeleted = [false, false];
  const inPlaceTook = [false, false];
  const lakeComplete = [false, false];
  const hourOf = new Map<string, 0 | 1>();
  let n = 0;
  for (const [index, s] of steps.entries()) {
    const where = `step ${index} ${JSON.stringify(s)}`;
    if (s.kind === 'export') {
      const items = await exportOne(dir, signal, n++, HOUR + s.hour * HOUR_MS, s.format, s.big);
      exported[s.hour].push(...items);
      if (s.format !== 'parquet') otlp[s.hour].push(...items);
      for (const i of items) hourOf.set(i, s.hour);
      lakeComplete[s.hour] = false;
    } else {
      const options: CompactMetricsOptions = {
        dir,
        prefix: 'raw',
        ...(s.out === 'lake' ? { outPrefix: 'lake' } : {}),
        settleMillis: 0,
        from: new Date(HOUR),
        deleteInputs: s.deleteInputs,
        leaseMillis: 60_000,
        leaseClockSkewMillis: 0,
        ...(s.small ? { targetFileBytes: 64 * 1024 } : {}),
      };
      for (const h of [0, 1] as const) {
        if (exported[h].length === 0) continue;
        if (s.out === 'lake') lakeTook[h] = true;
        else inPlaceTook[h] = true;
        if (s.out === 'lake' && (s.deleteInputs || inPlaceDeleted[h])) otlpMoved[h] = true;
        if (s.out === 'raw' && s.deleteInputs) inPlaceDeleted[h] = true;
      }
      const gate = stopAfterWrites(s.stopAfter ?? Number.POSITIVE_INFINITY);
      let report: CompactionReport | undefined;
      let thrown: unknown;
      try {
        report = await COMPACT[signal](options);
      } catch (error) {
        thrown = error;
      } finally {
        gate.restore();
      }
      if (gate.stopped()) passLeases();
      else {
        expect(thrown, where).toBeUndefined();
        const statuses = report?.partitions.map((p) => [p.partition, p.status, p.error]) ?? [];
        expect(
          statuses.filter(
            ([, status]) => !['compacted', 'finished', 'nothing-to-do'].includes(status as string),
          ),
          where,
        ).toEqual([]);
        if (s.out === 'lake') {
          for (const h of [0, 1]) {
            if (exported[h]?.length && !inPlaceTook[h]) lakeComplete[h] = true;
          }
        }
      }
    }
    const raw = await itemsUnder(dir, signal, 'raw');
    const lake = await itemsUnder(dir, signal, 'lake');
    const all = [...exported[0], ...exported[1]];
    const known = new Set(all);
    const inRaw = counts(raw);
    const inLake = counts(lake);
    // Never twice in a prefix, nothing that was not exported.
    expect(
      sorted([...inRaw].filter(([, c]) => c > 1).map(([i]) => i)),
      `raw twice, ${where}`,
    ).toEqual([]);
    expect(
      sorted([...inLake].filter(([, c]) => c > 1).map(([i]) => i)),
      `lake twice, ${where}`,
    ).toEqual([]);
    expect(sorted([...raw, ...lake].filter((i) => !known.has(i))), where).toEqual([]);
    // Never lost: each item is under one prefix at least.
    expect(sorted(all.filter((i) => !inRaw.has(i) && !inLake.has(i))), `lost, ${where}`).toEqual(
      [],
    );
    for (const h of [0, 1] as const) {
      const rawOfHour = sorted(raw.filter((i) => hourOf.get(i) === h));
      const lakeOfHour = sorted(lake.filter((i) => hourOf.get(i) === h));
      if (!lakeTook[h]) expect(rawOfHour, `raw hour ${h}, ${where}`).toEqual(sorted(exported[h]));
      if (!otlpMoved[h]) {
        expect(sorted(otlp[h].filter((i) => !inRaw.has(i))), `raw OTLP ${h}, ${where}`).toEqual([]);
      }
      if (lakeComplete[h]) {
        expect(lakeOfHour, `lake hour ${h}, ${where}`).toEqual(sorted(exported[h]));
      }
    }
  }
}
