import { join } from 'node:path';
import type { HrTime } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { textCells } from '../../../src/cli/terminal-text.js';
import { newTally } from '../../../src/encoding/records.js';
import { flatEncoder } from '../../../src/signals/flat-parquet/table.js';
import { spanColumnBuilders } from '../../../src/signals/traces/parquet.js';
import { SPANS } from '../../../src/signals/traces/parquet-schema.js';
import type { SpanLike } from '../../../src/signals/traces/span.js';
import { type CliInProcessOptions, lines, runCliInProcess } from '../../support/cli-child.js';
import { handBuiltSpan } from '../../support/readable-span.js';
import { writeAtKey } from '../../support/reader-fixtures.js';
import { signalKeyAt } from '../../support/signal-fixtures.js';
import { makeTempDir, removeDir } from '../../support/temp-dir.js';
import { CLI_T0 } from '../../support/time.js';

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const T0 = BigInt(CLI_T0.getTime()) * 1_000_000n;

/** A span of the trace: times in nanoseconds from CLI_T0. */
interface S {
  id: string;
  parent?: string;
  name?: string;
  start: bigint;
  end: bigint;
  service?: string;
}
const sid = (n: number) => n.toString(16).padStart(16, '0');

function spansObject(spans: S[]): Uint8Array {
  const bySvc = new Map<string, S[]>();
  for (const s of spans) {
    const k = s.service ?? 'svc';
    bySvc.set(k, [...(bySvc.get(k) ?? []), s]);
  }
  return new TextEncoder().encode(
    JSON.stringify({
      resourceSpans: [...bySvc].map(([service, list]) => ({
        resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] },
        scopeSpans: [
          {
            scope: { name: 't' },
            spans: list.map((s) => ({
              traceId: TRACE,
              spanId: s.id,
              parentSpanId: s.parent ?? '',
              name: s.name ?? s.id,
              kind: 1,
              startTimeUnixNano: (T0 + s.start).toString(),
              endTimeUnixNano: (T0 + s.end).toString(),
              status: {},
            })),
          },
        ],
      })),
    }),
  );
}

let root: string;
let n = 0;
beforeAll(async () => {
  root = await makeTempDir('otel-s3-cli-trace-edges-');
});
afterAll(() => removeDir(root));

/** Each list of spans in an object of its own, a second apart; the arguments that read them. */
async function store(objects: S[][], hours: number[] = []): Promise<string[]> {
  const dir = `d${++n}`;
  for (const [i, spans] of objects.entries()) {
    const at = new Date(CLI_T0.getTime() + (hours[i] ?? 0) * 3_600_000 + i * 1000);
    await writeAtKey(
      join(root, dir),
      signalKeyAt('traces', 'otlp-json', 'p', at, '.json'),
      spansObject(spans),
    );
  }
  return ['--dir', dir, '--prefix', 'p'];
}
/** A waterfall line's span column, tree prefix and name: what is before its service. */
const nameColumn = (line: string) => line.slice(0, line.indexOf('   svc')).trimEnd();
/** The cells between a waterfall line's two `|`: its bar. */
const barCells = (line: string) => line.slice(line.indexOf('|') + 1, line.lastIndexOf('|')).length;
const run = (args: string[], options: CliInProcessOptions = {}) =>
  runCliInProcess(['trace', TRACE, ...args], { ...options, cwd: root });

/** The spans as the exporter's Parquet stores them, in an object; the arguments that read it. */
async function storeParquet(spans: S[]): Promise<string[]> {
  const dir = `d${++n}`;
  const hr = (ns: bigint): HrTime => {
    const at = T0 + ns;
    return [Number(at / 1_000_000_000n), Number(at % 1_000_000_000n)];
  };
  const context = (spanId: string) => ({ traceId: TRACE, spanId, traceFlags: 1 });
  const like = spans.map(
    (s): SpanLike =>
      handBuiltSpan({
        resource: { attributes: { 'service.name': s.service ?? 'svc' } },
        instrumentationScope: { name: 't' },
        name: s.name ?? s.id,
        spanContext: () => context(s.id),
        ...(s.parent === undefined ? {} : { parentSpanContext: context(s.parent) }),
        startTime: hr(s.start),
        endTime: hr(s.end),
      }),
  );
  const builders = spanColumnBuilders();
  builders.append(like, newTally(false));
  const file = new Uint8Array(await flatEncoder(SPANS)(builders.seal(), { compression: 'none' }));
  await writeAtKey(
    join(root, dir),
    signalKeyAt('traces', 'parquet', 'p', CLI_T0, '.parquet'),
    file,
  );
  return ['--dir', dir, '--prefix', 'p'];
}

describe('otel-s3 trace: hostile and odd traces', () => {
  test('a span under a cycle of parents stays under it, though it started before the cycle', async () => {
    // 1 and 2 are each other's parent; 3, a child of 2, started first (clock skew).
    const args = await store([
      [
        { id: sid(1), parent: sid(2), start: 10n, end: 20n },
        { id: sid(2), parent: sid(1), start: 5n, end: 30n },
        { id: sid(3), parent: sid(2), start: 1n, end: 2n },
      ],
    ]);
    const { code, stdout, stderr } = await run(args);
    const names = lines(stdout).slice(2).map(nameColumn);
    expect([code, names]).toEqual([0, [sid(2), `├─ ${sid(3)}`, `└─ ${sid(1)}`]]);
    // Only the span the cycle is shown from is at the top level: said as a cycle, as its
    // parent is found.
    expect(stderr).toBe(
      'otel-s3: 1 cycle of parents in this trace: each shown from its earliest span, at the top level\n',
    );
  });

  test('a span id stored again with other contents is said, not taken for the same span', async () => {
    const args = await store([
      [{ id: sid(1), name: 'first', start: 0n, end: 10n }],
      [{ id: sid(1), name: 'second', start: 0n, end: 10n }],
      [{ id: sid(1), name: 'first', start: 0n, end: 10n }],
    ]);
    const { code, stdout, stderr } = await run(args);
    expect([code, lines(stdout)[2]]).toEqual([0, expect.stringMatching(/^first /)]);
    expect(stderr).toBe(
      'otel-s3: 1 span stored twice, shown once\n' +
        'otel-s3: 1 span id stored with other contents too (the first read shown): 0000000000000001\n',
    );
  });

  test('in a cycle, the last span shown under a span is drawn as its last', async () => {
    // 2 is shown first (the earliest of the cycle), 1 under it; 3, under 1, started before 2,
    // which is not shown again under 1: 3 is the last line under 1.
    const args = await store([
      [
        { id: sid(1), parent: sid(2), start: 10n, end: 20n },
        { id: sid(2), parent: sid(1), start: 5n, end: 30n },
        { id: sid(3), parent: sid(1), start: 1n, end: 2n },
      ],
    ]);
    const { code, stdout } = await run(args);
    const names = lines(stdout).slice(2).map(nameColumn);
    expect([code, names]).toEqual([0, [sid(2), `└─ ${sid(1)}`, `   └─ ${sid(3)}`]]);
  });

  test("--logs: a log records' object stored twice gives each record once, as its spans", async () => {
    const args = await store([
      [{ id: sid(1), start: 0n, end: 100n }],
      [{ id: sid(1), start: 0n, end: 100n }],
    ]);
    const record = (body: string, at: bigint) => ({
      traceId: TRACE,
      spanId: sid(1),
      timeUnixNano: String(T0 + at),
      severityText: 'INFO',
      body: { stringValue: body },
    });
    const logs = new TextEncoder().encode(
      JSON.stringify({
        resourceLogs: [
          {
            resource: { attributes: [{ key: 'service.name', value: { stringValue: 'svc' } }] },
            scopeLogs: [{ logRecords: [record('one', 10n), record('two', 20n)] }],
          },
        ],
      }),
    );
    for (const second of [5, 6]) {
      const at = new Date(CLI_T0.getTime() + second * 1000);
      await writeAtKey(
        join(root, args[1] as string),
        signalKeyAt('logs', 'otlp-json', 'p', at, '.json'),
        logs,
      );
    }
    const { code, stdout, stderr } = await run([...args, '--logs']);
    expect([code, lines(stdout).slice(2).map(nameColumn)]).toEqual([
      0,
      [sid(1), '├─ INFO one', '└─ INFO two'],
    ]);
    expect(stderr).toBe(
      'otel-s3: 1 span stored twice, shown once\notel-s3: 2 log records stored twice, shown once\n',
    );
  });

  test('a parent span id of all zeros (as some writers store a root) is no parent', async () => {
    const spans = [
      { id: sid(1), parent: '0000000000000000', start: 0n, end: 100n },
      { id: sid(2), parent: sid(1), start: 10n, end: 20n },
    ];
    for (const args of [await store([spans]), await storeParquet(spans)]) {
      const { code, stdout, stderr } = await run(args);
      expect([code, lines(stdout).slice(2).map(nameColumn), stderr]).toEqual([
        0,
        [sid(1), `└─ ${sid(2)}`],
        '',
      ]);
    }
  });

  test('a span naming itself as its parent is a root, said apart from parents not found', async () => {
    const args = await store([
      [
        { id: sid(1), parent: sid(1), start: 0n, end: 100n },
        { id: sid(2), parent: sid(1), start: 10n, end: 20n },
        { id: sid(3), parent: sid(9), start: 30n, end: 40n },
      ],
    ]);
    const { code, stdout, stderr } = await run(args);
    expect([code, lines(stdout).slice(2).map(nameColumn)]).toEqual([
      0,
      [sid(1), `└─ ${sid(2)}`, sid(3)],
    ]);
    expect(stderr).toBe(
      'otel-s3: 1 span of this trace names itself as its parent: shown at the top level\n' +
        'otel-s3: 1 span of this trace has a parent not found: shown at the top level\n',
    );
  });
});

describe('otel-s3 stats: root spans', () => {
  test('a span whose parent span id is all zeros is counted as a root', async () => {
    const args = await store([
      [
        { id: sid(1), parent: '0000000000000000', start: 0n, end: 100n },
        { id: sid(2), parent: sid(1), start: 10n, end: 20n },
        { id: sid(3), start: 30n, end: 40n },
      ],
    ]);
    const { code, stdout } = await runCliInProcess(['stats', ...args, '--format', 'json'], {
      cwd: root,
    });
    expect([code, JSON.parse(stdout).spanServices]).toEqual([
      0,
      [{ service: 'svc', spans: 3, rootSpans: 2, errorSpans: 0 }],
    ]);
  });
});

describe('otel-s3 stats: text', () => {
  test('totals of every column; a span without service.name; objects stored uncompressed', async () => {
    const args = await store([
      [
        { id: sid(1), start: 0n, end: 100n, service: '' },
        { id: sid(2), parent: sid(1), start: 10n, end: 20n, service: '' },
        { id: sid(3), start: 30n, end: 40n },
      ],
    ]);
    const { code, stdout } = await runCliInProcess(['stats', ...args], { cwd: root });
    expect(code).toBe(0);
    // The .json objects are stored as they are: nothing is smaller.
    expect(stdout).toMatch(/\nuncompressed +[^\n]*\), the same size\n/);
    expect(stdout).toMatch(
      /\nservice +spans +root spans +errors\n\(no service\.name\) +2 +1 +0\nsvc +1 +1 +0\ntotal +3 +2 +0\n$/,
    );
  });
});

describe('otel-s3 trace: order', () => {
  test('log records of one span at the same time: one order, however they were stored', async () => {
    const record = (body: string) => ({
      traceId: TRACE,
      spanId: sid(1),
      timeUnixNano: String(T0 + 10n),
      severityText: 'INFO',
      body: { stringValue: body },
    });
    const shown: string[][] = [];
    for (const bodies of [
      ['zeta', 'alpha'],
      ['alpha', 'zeta'],
    ]) {
      const args = await store([[{ id: sid(1), start: 0n, end: 100n }]]);
      // Each record in an object of its own, read in key order.
      for (const [i, body] of bodies.entries()) {
        const logs = {
          resourceLogs: [
            {
              resource: { attributes: [{ key: 'service.name', value: { stringValue: 'svc' } }] },
              scopeLogs: [{ logRecords: [record(body)] }],
            },
          ],
        };
        await writeAtKey(
          join(root, args[1] as string),
          signalKeyAt(
            'logs',
            'otlp-json',
            'p',
            new Date(CLI_T0.getTime() + (5 + i) * 1000),
            '.json',
          ),
          new TextEncoder().encode(JSON.stringify(logs)),
        );
      }
      const { code, stdout } = await run([...args, '--logs']);
      expect(code).toBe(0);
      shown.push(lines(stdout).slice(2).map(nameColumn));
    }
    expect(shown[1]).toEqual(shown[0]);
    expect(shown[0]).toEqual([sid(1), '├─ INFO alpha', '└─ INFO zeta']);
  });
});

describe('otel-s3 trace: no span', () => {
  test('--logs, the trace has log records but no span in the range: they are said', async () => {
    const args = await store([[{ id: sid(1), start: 0n, end: 100n }]]);
    const other = '1'.repeat(32);
    const logs = {
      resourceLogs: [
        {
          scopeLogs: [
            {
              logRecords: ['one', 'two'].map((body) => ({
                traceId: other,
                spanId: sid(7),
                timeUnixNano: String(T0),
                body: { stringValue: body },
              })),
            },
          ],
        },
      ],
    };
    await writeAtKey(
      join(root, args[1] as string),
      signalKeyAt('logs', 'otlp-json', 'p', CLI_T0, '.json'),
      new TextEncoder().encode(JSON.stringify(logs)),
    );
    const { code, stdout, stderr } = await runCliInProcess(['trace', other, ...args, '--logs'], {
      cwd: root,
    });
    expect([code, stdout, stderr]).toEqual([
      6,
      '',
      `otel-s3: no span of trace ${other} in ${join(root, args[1] as string)}/p/; ` +
        `2 log records of it: otel-s3 logs --trace-id ${other}\n`,
    ]);
  });

  test('not found while an object could not be read: exit 1, not 6 (it may hold the trace)', async () => {
    const args = await store([[{ id: sid(1), start: 0n, end: 100n }]]);
    await writeAtKey(
      join(root, args[1] as string),
      signalKeyAt('traces', 'otlp-json', 'p', new Date(CLI_T0.getTime() + 1000), '.json'),
      new TextEncoder().encode('{not json'),
    );
    const { code, stdout, stderr } = await runCliInProcess(['trace', '1'.repeat(32), ...args], {
      cwd: root,
    });
    expect([code, stdout]).toEqual([1, '']);
    expect(stderr).toContain(`otel-s3: no span of trace ${'1'.repeat(32)} in`);
  });
});

describe('otel-s3 trace: spans without times', () => {
  /** The trace's spans as stored, some fields left out; the arguments that read them. */
  async function storeRaw(spans: Record<string, unknown>[]): Promise<string[]> {
    const dir = `d${++n}`;
    const body = {
      resourceSpans: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'svc' } }] },
          scopeSpans: [{ spans: spans.map((s) => ({ traceId: TRACE, kind: 1, ...s })) }],
        },
      ],
    };
    await writeAtKey(
      join(root, dir),
      signalKeyAt('traces', 'otlp-json', 'p', CLI_T0, '.json'),
      new TextEncoder().encode(JSON.stringify(body)),
    );
    return ['--dir', dir, '--prefix', 'p', '--width', '10'];
  }
  const bars = (stdout: string) =>
    lines(stdout)
      .slice(2)
      .map((l) => l.slice(l.indexOf('|')));

  test('a span without a start has no place on the bar, not one from the trace start', async () => {
    const args = await storeRaw([
      {
        spanId: sid(1),
        name: 'a',
        startTimeUnixNano: String(T0),
        endTimeUnixNano: String(T0 + 1_000_000n),
      },
      // No start: its end is no reason to draw it from the trace's start.
      { spanId: sid(2), parentSpanId: sid(1), name: 'b', endTimeUnixNano: String(T0 + 500_000n) },
    ]);
    const { code, stdout } = await run(args);
    expect([code, bars(stdout)]).toEqual([0, ['|██████████|', `|${' '.repeat(10)}|`]]);
  });

  test('a trace of spans without times: no start in its heading, no bars', async () => {
    const args = await storeRaw([
      { spanId: sid(1), name: 'a' },
      { spanId: sid(2), parentSpanId: sid(1), name: 'b', endTimeUnixNano: String(T0) },
    ]);
    const { code, stdout } = await run(args);
    expect([code, lines(stdout)[0], bars(stdout)]).toEqual([
      0,
      `trace ${TRACE}: 2 spans, 1 service, no start times`,
      [`|${' '.repeat(10)}|`, `|${' '.repeat(10)}|`],
    ]);
  });
});

describe('otel-s3 trace: the width of the waterfall', () => {
  const long = 'n'.repeat(70);
  const spans = async () =>
    store([
      [
        { id: sid(1), name: 'root', start: 0n, end: 100_000_000n },
        { id: sid(2), parent: sid(1), name: long, start: 10_000_000n, end: 20_000_000n },
      ],
    ]);

  test('on a terminal, the default waterfall fits its columns', async () => {
    const args = await spans();
    for (const columns of [60, 80, 100]) {
      const { code, stdout } = await run(args, { stdoutTTY: true, stdoutColumns: columns });
      const out = lines(stdout);
      expect([code, out.filter((l) => textCells(l) > columns)]).toEqual([0, []]);
      for (const bar of out.slice(-2).map(barCells)) expect(bar).toBeGreaterThanOrEqual(10);
    }
    // At 80 columns, the bar and the names narrowed alike; the heading on two lines.
    const at80 = lines((await run(args, { stdoutTTY: true, stdoutColumns: 80 })).stdout);
    expect([at80.length, at80.slice(-2).map(barCells), nameColumn(at80.at(-1) as string)]).toEqual([
      5,
      [20, 20],
      `└─ ${'n'.repeat(21)}…`,
    ]);
    // A terminal wide enough for the default layout gets it.
    const { stdout } = await run(args, { stdoutTTY: true, stdoutColumns: 200 });
    const out = lines(stdout);
    expect([out.slice(-2).map(barCells), nameColumn(out.at(-1) as string)]).toEqual([
      [40, 40],
      `└─ ${'n'.repeat(56)}…`,
    ]);
  });

  test('--width wins on a terminal; elsewhere the layout is as it was', async () => {
    const args = await spans();
    const tty = await run([...args, '--width', '50'], { stdoutTTY: true, stdoutColumns: 80 });
    expect(lines(tty.stdout).slice(-2).map(barCells)).toEqual([50, 50]);
    for (const options of [{}, { stdoutTTY: true }, { stdoutColumns: 80 }]) {
      const { stdout } = await run(args, options);
      const out = lines(stdout);
      expect([out.slice(-2).map(barCells), nameColumn(out.at(-1) as string)]).toEqual([
        [40, 40],
        `└─ ${'n'.repeat(56)}…`,
      ]);
    }
  });

  test('--width with --format jsonl, which has no bar, is a usage error naming both', async () => {
    const args = await store([[{ id: sid(1), start: 0n, end: 1n }]]);
    const { code, stdout, stderr } = await run([...args, '--format', 'jsonl', '--width', '50']);
    expect([code, stdout, stderr]).toEqual([
      2,
      '',
      'otel-s3: --width 50 goes with the waterfall, not --format jsonl (it sets the cells of its bar)\n',
    ]);
  });
});

describe('otel-s3 trace: names that are not plain ASCII', () => {
  test('wide, combining, emoji, ANSI-looking and control characters: columns by cells', async () => {
    // Times in nanoseconds from the start: the trace is 1 ms, its bar 40 cells, 25 µs a cell.
    const args = await store([
      [
        { id: sid(1), name: 'naïve café', start: 0n, end: 1_000_000n },
        { id: sid(2), parent: sid(1), name: '数据库查询', start: 0n, end: 500_000n },
        {
          id: sid(3),
          parent: sid(1),
          name: '👍 e\u0301',
          service: 'サービス',
          start: 250_000n,
          end: 750_000n,
        },
        {
          id: sid(4),
          parent: sid(2),
          name: '\u001b[31mred\u0007',
          start: 500_000n,
          end: 1_000_000n,
        },
        { id: sid(5), parent: sid(1), name: '長'.repeat(40), start: 750_000n, end: 1_000_000n },
      ],
    ]);
    const { code, stdout } = await run(args);
    // Written out by hand: the cells each name takes (a CJK character two, an emoji two, a
    // combining accent none, an escape as its visible text), padded to the widest column: 60
    // cells of names (the 40 CJK characters, 80 cells, cut to 3 + 28 × 2 + 1), 8 of services
    // (サービス), 6 of status, 8 of durations (right-aligned).
    const sp = (n: number) => ' '.repeat(n);
    const full = (n: number) => '█'.repeat(n);
    expect([code, lines(stdout)]).toEqual([
      0,
      [
        `trace ${TRACE}: 5 spans, 2 services, 1 ms from 2026-11-30 04:00:00.000 UTC`,
        `span${sp(56)}   service${sp(1)}   status   duration   0${sp(37)}1 ms`,
        `naïve café${sp(50)}   svc${sp(5)}   unset${sp(1)}   ${sp(4)}1 ms   |${full(40)}|`,
        `├─ 数据库查询${sp(47)}   svc${sp(5)}   unset${sp(1)}   ${sp(2)}0.5 ms   |${full(20)}${sp(20)}|`,
        `│  └─ \\x1b[31mred\\x07${sp(39)}   svc${sp(5)}   unset${sp(1)}   ${sp(2)}0.5 ms   |${sp(20)}${full(20)}|`,
        `├─ 👍 e\u0301${sp(53)}   サービス   unset${sp(1)}   ${sp(2)}0.5 ms   |${sp(10)}${full(20)}${sp(10)}|`,
        `└─ ${'長'.repeat(28)}…   svc${sp(5)}   unset${sp(1)}   ${sp(1)}0.25 ms   |${sp(30)}${full(10)}|`,
      ],
    ]);
  });
});
