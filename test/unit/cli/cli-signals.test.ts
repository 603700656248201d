import { join } from 'node:path';
import type { HrTime } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { beforeAll, describe, expect, test } from 'vitest';
import type { StatsReport } from '../../../src/cli/commands/stats.js';
import type { LogRecordRow, SpanRow } from '../../../src/reader.js';
import { type CliInProcessOptions, lines, runCliInProcess } from '../../support/cli-child.js';
import {
  encodeObject,
  hrTimeNanos,
  keyAt,
  sampleMetrics,
  writeAtKey,
} from '../../support/reader-fixtures.js';
import {
  encodeLogRecords,
  encodeSpans,
  type RecordedTrace,
  recordTrace,
  signalKeyAt,
} from '../../support/signal-fixtures.js';
import { makeTempDir, removeDir } from '../../support/temp-dir.js';
import { CLI_T0 } from '../../support/time.js';

let root: string;
let recorded: RecordedTrace;
const run = (args: string[], options: CliInProcessOptions = {}) =>
  runCliInProcess(args, { cwd: root, ...options });
const MIRROR = ['--dir', 'mirror', '--prefix', 'prod'];

beforeAll(async () => {
  root = await makeTempDir('otel-s3-cli-signals-');
  const mirror = join(root, 'mirror');
  recorded = await recordTrace();
  // The trace's spans in two objects of two formats, in the reverse of the order the SDK ended
  // them (so no order of the waterfall comes from the storage's), its log records in one, and
  // metrics.
  const reversed = recorded.spans.toReversed();
  const [first, rest] = [reversed.slice(0, 3), reversed.slice(3)];
  const t = (s: number) => new Date(CLI_T0.getTime() + s * 1000);
  await writeAtKey(
    mirror,
    signalKeyAt('traces', 'otlp-json', 'prod', t(1), '.json.zst'),
    encodeSpans(first, 'otlp-json', 'zstd'),
  );
  await writeAtKey(
    mirror,
    signalKeyAt('traces', 'otlp-proto', 'prod', t(2), '.binpb.gz'),
    encodeSpans(rest, 'otlp-proto', 'gzip'),
  );
  await writeAtKey(
    mirror,
    signalKeyAt('logs', 'otlp-proto', 'prod', t(3), '.binpb'),
    encodeLogRecords(recorded.logs, 'otlp-proto', 'none'),
  );
  await writeAtKey(
    mirror,
    keyAt('prod', t(4), '.json.gz'),
    encodeObject(await sampleMetrics('svc'), 'otlp-json', 'gzip'),
  );
  return () => removeDir(root);
});

const nanos = (t: HrTime) => BigInt(hrTimeNanos(t));

/** The waterfall the recorded trace must give: depth first, children by start time. */
function expectedOrder(spans: ReadableSpan[]): { span: ReadableSpan; depth: number }[] {
  const out: { span: ReadableSpan; depth: number }[] = [];
  const visit = (parent: string | undefined, depth: number) => {
    const children = spans
      .filter((s) => s.parentSpanContext?.spanId === parent)
      .sort((a, b) => (nanos(a.startTime) < nanos(b.startTime) ? -1 : 1));
    for (const span of children) {
      out.push({ span, depth });
      visit(span.spanContext().spanId, depth + 1);
    }
  };
  visit(undefined, 0);
  return out;
}

/** A waterfall line: tree depth (3 columns a level), then the columns three spaces apart. */
function parseLine(line: string) {
  const match = /^((?:│ {2}|├─ |└─ | {3})*)([^|]+)\|(.*)\|$/u.exec(line);
  if (match === null) throw new Error(`not a waterfall line: ${line}`);
  const columns = (match[2] as string).trim().split(/ {3,}/);
  // A log record's line has no status.
  const [name, service, status, duration] =
    columns.length === 4 ? columns : [columns[0], columns[1], '', columns[2]];
  return {
    depth: [...(match[1] as string)].length / 3,
    name,
    service,
    status,
    duration,
    bar: match[3] as string,
  };
}

describe('otel-s3 trace', () => {
  test('the waterfall: the recorded tree, order, durations, statuses, services and bars', async () => {
    const { code, stdout, stderr } = await run(['trace', recorded.traceId, ...MIRROR]);
    expect([code, stderr]).toEqual([0, '']);
    const [heading, header, ...body] = lines(stdout);
    expect(heading).toBe(
      `trace ${recorded.traceId}: 6 spans, 2 services, 120 ms from 2026-11-30 04:00:00.000 UTC, 1 error`,
    );
    expect(header).toMatch(/^span +service +status +duration +0 +120 ms$/);
    const want = expectedOrder(recorded.spans);
    const t0 = nanos(want[0]?.span.startTime ?? [0, 0]);
    const total = Number(nanos(want[0]?.span.endTime ?? [0, 0]) - t0);
    const got = body.map(parseLine);
    expect(got.map((l) => [l.depth, l.name])).toEqual(want.map((w) => [w.depth, w.span.name]));
    const STATUS = ['unset', 'ok', 'error'];
    want.forEach(({ span }, i) => {
      const line = got[i] as ReturnType<typeof parseLine>;
      const ms = Number(nanos(span.endTime) - nanos(span.startTime)) / 1e6;
      expect([line.duration, line.status, line.service], span.name).toEqual([
        `${ms} ms`,
        STATUS[span.status.code],
        span.resource.attributes['service.name'],
      ]);
      // The bar starts at the span's start and is as long as its duration, in 40 cells.
      expect(line.bar).toHaveLength(40);
      const from = line.bar.indexOf('█');
      const cells = line.bar.lastIndexOf('█') + 1 - from;
      const start = (Number(nanos(span.startTime) - t0) / total) * 40;
      expect(Math.abs(from - start), span.name).toBeLessThan(1);
      expect(Math.abs(cells - (ms * 1e6 * 40) / total), span.name).toBeLessThanOrEqual(1);
    });
  });

  test("--logs puts each of the trace's log records under its span, at its time", async () => {
    const { code, stdout } = await run(['trace', recorded.traceId, '--logs', ...MIRROR]);
    expect(code).toBe(0);
    const body = lines(stdout).slice(2).map(parseLine);
    const inTrace = recorded.logs.filter((l) => l.spanContext?.traceId === recorded.traceId);
    expect(inTrace).toHaveLength(3);
    const spanNames = new Map(recorded.spans.map((s) => [s.spanContext().spanId, s.name]));
    for (const log of inTrace) {
      const text = typeof log.body === 'string' ? log.body : JSON.stringify(log.body);
      const at = body.findIndex((l) => l.name?.endsWith(` ${text}`));
      expect(at, text).toBeGreaterThan(0);
      const line = body[at] as ReturnType<typeof parseLine>;
      // Its span: the nearest line above one level up.
      const parent = body.slice(0, at).findLast((l) => l.depth === line.depth - 1);
      expect(parent?.name, text).toBe(spanNames.get(log.spanContext?.spanId ?? ''));
      const ms =
        Number(
          nanos(log.hrTime) -
            nanos(recorded.spans.find((s) => !s.parentSpanContext)?.startTime ?? [0, 0]),
        ) / 1e6;
      expect(line.duration).toBe(`+${ms} ms`);
      expect(line.bar.indexOf('◆')).toBe(Math.floor((ms / 120) * 40));
    }
    // The record outside the trace is not shown.
    expect(stdout).not.toContain('cache warmed');
    expect(body).toHaveLength(6 + 3);
  });

  test('--format jsonl: the spans as rows (SpanRow, as `spans` prints them), in the waterfall order', async () => {
    const trace = await run(['trace', recorded.traceId, '--format', 'jsonl', ...MIRROR]);
    expect(trace.code).toBe(0);
    const rows = lines(trace.stdout).map((l) => JSON.parse(l) as SpanRow);
    expect(rows.map((r) => r.spanId)).toEqual(
      expectedOrder(recorded.spans).map((w) => w.span.spanContext().spanId),
    );
    const all = await run(['spans', '--format', 'jsonl', ...MIRROR]);
    const byId = new Map(
      lines(all.stdout).map((l) => [(JSON.parse(l) as SpanRow).spanId, JSON.parse(l)]),
    );
    for (const row of rows) expect(row).toEqual(byId.get(row.spanId));
  });

  test('a span stored twice is shown once, and said; --width sets the bar', async () => {
    const twice = join(root, 'twice');
    for (const seconds of [1, 2]) {
      await writeAtKey(
        twice,
        signalKeyAt(
          'traces',
          'otlp-json',
          'p',
          new Date(CLI_T0.getTime() + seconds * 1000),
          '.json',
        ),
        encodeSpans(recorded.spans, 'otlp-json', 'none'),
      );
    }
    const { code, stdout, stderr } = await run([
      'trace',
      recorded.traceId,
      '--dir',
      'twice',
      '--prefix',
      'p',
      '--width',
      '20',
    ]);
    expect([code, stderr]).toEqual([0, 'otel-s3: 6 spans stored twice, shown once\n']);
    const body = lines(stdout).slice(2).map(parseLine);
    expect(body.map((l) => l.name)).toEqual(expectedOrder(recorded.spans).map((w) => w.span.name));
    expect(body.map((l) => l.bar.length)).toEqual(Array(6).fill(20));
    expect(body[0]?.bar).toBe('█'.repeat(20));
    const narrow = await run(['trace', recorded.traceId, ...MIRROR, '--width', '5']);
    expect([narrow.code, narrow.stderr]).toEqual([
      2,
      'otel-s3: --width "5": give a whole number of cells, 10-200\n',
    ]);
  });

  test('a trace id that is not 32 hex digits is a usage error; an unknown one exits 6', async () => {
    const bad = await run(['trace', 'abc', ...MIRROR]);
    expect([bad.code, bad.stderr]).toEqual([
      2,
      'otel-s3: trace id "abc": a trace id is 32 hex digits, e.g. 4bf92f3577b34da6a3ce929d0e0e4736\n',
    ]);
    // W3C's invalid id: no span has it, so no search can find one.
    const zeros = await run(['trace', '0'.repeat(32), ...MIRROR]);
    expect([zeros.code, zeros.stderr]).toEqual([
      2,
      `otel-s3: trace id "${'0'.repeat(32)}": all zeros is no trace's id (W3C: invalid), e.g. 4bf92f3577b34da6a3ce929d0e0e4736\n`,
    ]);
    const none = await run(['trace', `${'0'.repeat(31)}1`, ...MIRROR]);
    expect([none.code, none.stdout, none.stderr]).toEqual([
      6,
      '',
      `otel-s3: no span of trace ${'0'.repeat(31)}1 in ${join(root, 'mirror')}/prod/\n`,
    ]);
  });
});

describe('otel-s3 spans and logs', () => {
  const spanNames = async (args: string[]) => {
    const { code, stdout, stderr } = await run(['spans', '--format', 'jsonl', ...MIRROR, ...args]);
    expect([code, stderr]).toEqual([0, '']);
    return lines(stdout)
      .map((l) => (JSON.parse(l) as SpanRow).name)
      .sort();
  };

  test('filters: service, name, status, attribute, trace id, duration', async () => {
    expect(await spanNames([])).toEqual(recorded.spans.map((s) => s.name).sort());
    expect(await spanNames(['--service', 'cart'])).toEqual(['add item', 'validate']);
    expect(await spanNames(['--name', 'SELECT*', '--name', 'render'])).toEqual([
      'SELECT orders',
      'render',
    ]);
    expect(await spanNames(['--status', 'error'])).toEqual(['add item']);
    expect(await spanNames(['--attribute', 'cart.items=3'])).toEqual(['add item']);
    expect(await spanNames(['--attribute', 'db.system'])).toEqual(['SELECT orders']);
    // A resource attribute matches too.
    expect(await spanNames(['--attribute', 'service.name=car*', '--status', 'unset'])).toEqual([
      'validate',
    ]);
    // Any case, as the status is written in the table (Error) and in OTLP (STATUS_CODE_ERROR).
    expect(await spanNames(['--status', 'ERROR'])).toEqual(['add item']);
    expect(await spanNames(['--status', 'Error'])).toEqual(['add item']);
    const badStatus = await run(['spans', ...MIRROR, '--status', 'failed']);
    expect([badStatus.code, badStatus.stderr]).toEqual([
      2,
      "otel-s3: option '--status <status>' argument 'failed' is invalid. Allowed choices are unset, ok, error (any case).\n(otel-s3 --help shows the usage)\n",
    ]);
    // A filter of one value given twice is refused: its first value was dropped without a word
    // (`--status error --status ok` printed the ok spans only), where a repeated --service or
    // --name keeps the rows of any of its values.
    const twice = await run(['spans', ...MIRROR, '--status', 'error', '--status', 'ok']);
    expect([twice.code, twice.stderr]).toEqual([
      2,
      "otel-s3: option '--status <status>' argument 'ok' is invalid. It takes one value, and error was given before: give it once.\n(otel-s3 --help shows the usage)\n",
    ]);
    const other16 = `${'0'.repeat(15)}1`;
    for (const [command, flag, a, b] of [
      ['spans', '--trace-id', recorded.traceId, `${'0'.repeat(31)}1`],
      ['spans', '--min-duration', '1s', '1ns'],
      ['logs', '--trace-id', recorded.traceId, `${'0'.repeat(31)}1`],
      ['logs', '--span-id', other16, other16],
      ['logs', '--severity', 'fatal', 'trace'],
      ['logs', '--body', 'stock', 'order'],
    ] as const) {
      const again = await run([command, ...MIRROR, flag, a, flag, b]);
      expect([command, flag, again.code, again.stdout]).toEqual([command, flag, 2, '']);
      expect(again.stderr).toContain(`and ${a} was given before`);
    }
    expect(await spanNames(['--trace-id', recorded.traceId.toUpperCase()])).toHaveLength(6);
    // With --trace-id the reader keeps that trace's spans only: the notes count them, not the
    // range's (an unknown trace has none; a filter that left out all of the trace's says so).
    const other = `${'0'.repeat(31)}1`;
    const unknown = await run(['spans', ...MIRROR, '--trace-id', other]);
    expect([unknown.code, unknown.stderr]).toEqual([
      0,
      `otel-s3: no spans of trace ${other} in ${join(root, 'mirror')}/prod/\n`,
    ]);
    const outOfTrace = await run([
      'spans',
      ...MIRROR,
      '--trace-id',
      recorded.traceId,
      '--service',
      'chekout',
    ]);
    expect([outOfTrace.code, outOfTrace.stderr]).toEqual([
      0,
      `otel-s3: no span matched the filters, of 6 spans of trace ${recorded.traceId} in this range, of the services cart, checkout\n`,
    ]);
    expect(await spanNames(['--min-duration', '60ms'])).toEqual([
      'GET /checkout',
      'POST /cart',
      'add item',
    ]);
    // A misspelled service is told from a filter that matched nothing by the services there are
    // (before, the note ended at "in this range").
    const none = await run(['spans', ...MIRROR, '--service', 'chekout']);
    expect([none.code, none.stderr]).toEqual([
      0,
      'otel-s3: no span matched the filters, of 6 spans in this range, of the services cart, checkout\n',
    ]);
    const noLogs = await run(['logs', ...MIRROR, '--service', 'chekout', '--severity', 'fatal']);
    expect([noLogs.code, noLogs.stderr]).toEqual([
      0,
      'otel-s3: no log record matched the filters, of 4 log records in this range, of the services cart, checkout\n',
    ]);
  });

  test('csv has the jsonl fields, in order; the table shows the span', async () => {
    const jsonl = await run(['spans', '--format', 'jsonl', ...MIRROR, '--status', 'error']);
    const [row] = lines(jsonl.stdout).map((l) => JSON.parse(l) as Record<string, unknown>);
    const csv = await run(['spans', '--format', 'csv', ...MIRROR, '--status', 'error']);
    const [header, line] = lines(csv.stdout);
    expect(header?.split(',')).toEqual(Object.keys(row ?? {}));
    expect(line).toContain(',add item,server,error,out of stock,cart,');
    const table = await run(['spans', ...MIRROR, '--status', 'error'], { stdoutTTY: true });
    expect(lines(table.stdout)[1]).toMatch(
      new RegExp(
        `^2026-11-30 04:00:00\\.035 +60 ms +cart +add item +server +error +${recorded.traceId} +cart\\.items=3$`,
      ),
    );
  });

  test("the tables' time column says its zone, UTC", async () => {
    // Before: the column was headed `time`, its times UTC without a mark, read as local time
    // by whoever is not in UTC (the waterfall's heading says UTC).
    for (const command of ['spans', 'logs', 'points']) {
      const table = await run([command, ...MIRROR], { stdoutTTY: true });
      expect(lines(table.stdout)[0], command).toMatch(/^time \(UTC\) {3}/);
    }
  });

  test('logs: severity (by number, or by text), trace id, span id, body, service', async () => {
    const bodies = async (args: string[]) => {
      const { code, stdout, stderr } = await run(['logs', '--format', 'jsonl', ...MIRROR, ...args]);
      expect([code, stdout === '' || stderr === '']).toEqual([0, true]);
      return lines(stdout).map((l) => {
        const row = JSON.parse(l) as LogRecordRow;
        return typeof row.body === 'string' ? row.body : JSON.stringify(row.body);
      });
    };
    expect(await bodies([])).toHaveLength(4);
    expect(await bodies(['--severity', 'warn'])).toEqual([
      '{"message":"item out of stock","sku":"A-42"}',
    ]);
    expect((await bodies(['--severity', 'info'])).sort()).toEqual(
      ['checkout done', 'querying orders', '{"message":"item out of stock","sku":"A-42"}'].sort(),
    );
    expect(await bodies(['--trace-id', recorded.traceId])).toHaveLength(3);
    const query = recorded.spans.find((s) => s.name === 'SELECT orders');
    expect(await bodies(['--span-id', query?.spanContext().spanId ?? ''])).toEqual([
      'querying orders',
    ]);
    const zeros = await run(['logs', ...MIRROR, '--span-id', '0'.repeat(16)]);
    expect([zeros.code, zeros.stderr]).toEqual([
      2,
      `otel-s3: --span-id "${'0'.repeat(16)}": all zeros is no span's id (W3C: invalid), e.g. 00f067aa0ba902b7\n`,
    ]);
    expect(await bodies(['--body', 'stock'])).toHaveLength(1);
    expect(await bodies(['--service', 'checkout', '--attribute', 'sku'])).toEqual([]);
    const csv = await run(['logs', '--format', 'csv', ...MIRROR, '--severity', 'error']);
    expect(lines(csv.stdout)[0]).toBe(
      'time,observedTime,severity,severityNumber,body,traceId,spanId,eventName,service,resource,scope,attributes',
    );
    // Any case: ERROR as the records spell it, Warn as people type it.
    expect(await bodies(['--severity', 'WARN'])).toEqual(await bodies(['--severity', 'warn']));
    expect(await bodies(['--severity', 'Warn'])).toHaveLength(1);
    // WARNING, as Python's logging and syslog name it and as the text filter reads it.
    expect(await bodies(['--severity', 'Warning'])).toEqual([
      '{"message":"item out of stock","sku":"A-42"}',
    ]);
    const bad = await run(['logs', ...MIRROR, '--severity', 'loud']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(
      'Allowed choices are trace, debug, info, warn (or warning), error, fatal',
    );
  });
});

describe('stats, cat and ls know every signal', () => {
  test('stats --format json: objects per signal, spans and log records per service', async () => {
    const { code, stdout } = await run(['stats', '--format', 'json', ...MIRROR]);
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as StatsReport;
    expect(report.signals).toEqual({ traces: 2, logs: 1, metrics: 1 });
    expect(report.objects).toBe(4);
    expect(report.spans).toBe(6);
    expect(report.spanServices).toEqual([
      { service: 'cart', spans: 2, rootSpans: 0, errorSpans: 1 },
      { service: 'checkout', spans: 4, rootSpans: 1, errorSpans: 0 },
    ]);
    expect(report.logRecords).toBe(4);
    expect(report.logServices).toEqual([
      { service: 'cart', logRecords: 1, severities: { ERROR: 1 } },
      { service: 'checkout', logRecords: 3, severities: { INFO: 2, DEBUG: 1 } },
    ]);
    expect(report.dataPoints).toBe(6);
    const text = await run(['stats', ...MIRROR, '--signal', 'traces']);
    expect(text.stdout).toMatch(
      /\nservice +spans +root spans +errors\ncart +2 +0 +1\ncheckout +4 +1 +0\ntotal +6 +1 +1\n$/,
    );
    const logs = await run(['stats', ...MIRROR, '--signal', 'logs']);
    expect(logs.stdout).toMatch(
      /\nservice +log records +DEBUG +INFO +ERROR\ncart +1 +0 +0 +1\ncheckout +3 +1 +2 +0\ntotal +4 +1 +2 +1\n$/,
    );
  });

  test("stats of a signal with nothing in range shows that signal's empty table, no other", async () => {
    for (const [signal, header] of [
      ['traces', /\nservice +spans +root spans +errors\ntotal +0 +0 +0\n$/],
      ['logs', /\nservice +log records\ntotal +0\n$/],
      ['metrics', /\nmetric +type +series +data points\ntotal +0 +0\n$/],
    ] as const) {
      const { stdout } = await run(['stats', ...MIRROR, '--signal', signal, '--to', '2001-01-01']);
      expect(stdout).toMatch(header);
    }
  });

  test('cat --signal: the requests of that signal; --with-key names it', async () => {
    const { code, stdout } = await run(['cat', ...MIRROR, '--signal', 'traces', '--with-key']);
    expect(code).toBe(0);
    const wrapped = lines(stdout).map(
      (l) => JSON.parse(l) as { signal: string; request: Record<string, unknown> },
    );
    expect(wrapped.map((w) => [w.signal, Object.keys(w.request)])).toEqual([
      ['traces', ['resourceSpans']],
      ['traces', ['resourceSpans']],
    ]);
    const all = await run(['cat', ...MIRROR]);
    expect(
      lines(all.stdout)
        .map((l) => Object.keys(JSON.parse(l))[0])
        .sort(),
    ).toEqual(['resourceLogs', 'resourceMetrics', 'resourceSpans', 'resourceSpans']);
  });

  test("points reads the metrics only; other signals' objects are not keys out of the layout", async () => {
    const { code, stdout, stderr } = await run(['points', '--format', 'jsonl', ...MIRROR]);
    expect([code, stderr]).toEqual([0, '']);
    expect(lines(stdout)).toHaveLength(6);
    const ls = await run(['ls', '--format', 'jsonl', ...MIRROR, '--signal', 'logs']);
    expect(lines(ls.stdout).map((l) => (JSON.parse(l) as { signal: string }).signal)).toEqual([
      'logs',
    ]);
    const spansOnly = join(root, 'spans-only');
    await writeAtKey(
      spansOnly,
      signalKeyAt('traces', 'otlp-json', 'p', CLI_T0, '.json'),
      encodeSpans(recorded.spans, 'otlp-json', 'none'),
    );
    const nothing = await run(['logs', '--dir', 'spans-only', '--prefix', 'p']);
    expect([nothing.code, nothing.stderr]).toEqual([
      5,
      `otel-s3: nothing to read: no objects of log records under ${spansOnly}/p/, only 1 object of spans\n`,
    ]);
    // With a range that holds nothing, the prefix's first keys tell the same.
    const ranged = await run(['logs', '--dir', 'spans-only', '--prefix', 'p', '--since', '1h']);
    expect([ranged.code, ranged.stderr]).toEqual([nothing.code, nothing.stderr]);
    const quiet = await run(['spans', '--dir', 'spans-only', '--prefix', 'p', '--since', '1h']);
    expect(quiet.code).toBe(0);
    // The range said as read: an hour back from the run's start.
    expect(quiet.stderr).toMatch(
      new RegExp(
        `^otel-s3: no spans in ${escapeRegExp(`${spansOnly}/p/`)} since \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\n$`,
      ),
    );
  });
});

describe('otel-s3 trace on hostile spans', () => {
  const TRACE = 'ab'.repeat(16);
  const id = (n: number) => n.toString(16).padStart(16, '0');
  const span = (n: number, parent: number | undefined, name = `s${n}`) => ({
    traceId: TRACE,
    spanId: id(n),
    ...(parent === undefined ? {} : { parentSpanId: id(parent) }),
    name,
    startTimeUnixNano: String(1_764_475_200_000_000_000n + BigInt(n) * 1000n),
    endTimeUnixNano: String(1_764_475_200_000_000_000n + BigInt(n) * 1000n + 500n),
  });

  test('a cycle of parents, a chain 20000 deep and escape sequences in names: each span once, safely', async () => {
    const DEPTH = 20_000;
    const spans = [
      span(1, 2), // 1 and 2 are each other's parent: no root reaches them
      span(2, 1),
      span(3, undefined, '\u001b[31mred\u202e'),
      ...Array.from({ length: DEPTH }, (_, i) => span(100 + i, i === 0 ? 3 : 99 + i)),
    ];
    const body = JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans }] }] });
    const dir = join(root, 'hostile');
    await writeAtKey(
      dir,
      signalKeyAt('traces', 'otlp-json', 'p', CLI_T0, '.json'),
      Buffer.from(`${body}\n`),
    );
    const { code, stdout, stderr } = await run([
      'trace',
      TRACE,
      '--dir',
      'hostile',
      '--prefix',
      'p',
    ]);
    expect([code, stderr]).toEqual([
      0,
      // One span of the cycle at the top level, the other under it.
      'otel-s3: 1 cycle of parents in this trace: each shown from its earliest span, at the top level\n',
    ]);
    const body2 = lines(stdout).slice(2);
    expect(body2).toHaveLength(spans.length);
    expect(body2[0]).toMatch(/^\\x1b\[31mred\\u202e +unset/);
    // Deep lines keep a bounded width.
    expect(Math.max(...body2.map((l) => l.length))).toBeLessThan(200);
    expect(body2.at(-2)).toMatch(/^s1 /);
    expect(body2.at(-1)).toMatch(/^└─ s2 /);
  }, 60_000);
});

describe('hand-made spans and records', () => {
  const T0 = 1_764_475_200_000_000_000n; // 2025-11-30T04:00:00Z
  /** OTLP/JSON objects of `spans` and `records` (one resource, service `svc`) under `<name>/p`. */
  const writeDir = async (name: string, spans: object[], records: object[] = []) => {
    const dir = join(root, name);
    const resource = { attributes: [{ key: 'service.name', value: { stringValue: 'svc' } }] };
    const json = (body: object) => Buffer.from(`${JSON.stringify(body)}\n`);
    await writeAtKey(
      dir,
      signalKeyAt('traces', 'otlp-json', 'p', CLI_T0, '.json'),
      json({ resourceSpans: [{ resource, scopeSpans: [{ spans }] }] }),
    );
    if (records.length > 0) {
      await writeAtKey(
        dir,
        signalKeyAt('logs', 'otlp-json', 'p', CLI_T0, '.json'),
        json({ resourceLogs: [{ resource, scopeLogs: [{ logRecords: records }] }] }),
      );
    }
    return (args: string[], options: CliInProcessOptions = {}) =>
      run([...args, '--dir', name, '--prefix', 'p'], options);
  };
  const TRACE = 'c'.repeat(32);
  const span = (id: string, parent: string, name: string, start: bigint, end: bigint) => ({
    traceId: TRACE,
    spanId: id,
    parentSpanId: parent,
    name,
    startTimeUnixNano: String(T0 + start),
    endTimeUnixNano: String(T0 + end),
  });

  test('--min-duration keeps a span of exactly that length, in any unit', async () => {
    const cli = await writeDir('durations', [
      span('0000000000000001', '', '9 us', 0n, 9_000n),
      span('0000000000000002', '', '13 us', 0n, 13_000n),
      span('0000000000000003', '', '1.1 s', 0n, 1_100_000_000n),
      span('0000000000000004', '', '8999 ns', 0n, 8_999n),
    ]);
    const names = async (min: string) => {
      const { code, stdout } = await cli(['spans', '--format', 'jsonl', '--min-duration', min]);
      expect(code).toBe(0);
      return lines(stdout).map((l) => (JSON.parse(l) as SpanRow).name);
    };
    for (const min of ['9us', '9000ns', '0.009ms', '0.000009s', '8999.5ns']) {
      expect(await names(min), min).toEqual(['9 us', '13 us', '1.1 s']);
    }
    for (const min of ['13us', '13000ns', '0.013']) {
      expect(await names(min), min).toEqual(['13 us', '1.1 s']);
    }
    expect(await names('1.1s')).toEqual(['1.1 s']);
    expect(await names('1100.000001ms')).toEqual([]);
  });

  test('a * wildcard matches across a newline, in names, services and attribute values', async () => {
    const cli = await writeDir('newlines', [
      {
        ...span('0000000000000001', '', 'GET /a\nnext', 0n, 1n),
        attributes: [{ key: 'note', value: { stringValue: 'one\r\ntwo' } }],
      },
      span('0000000000000002', '', 'POST /b', 0n, 1n),
    ]);
    const names = async (args: string[]) => {
      const { code, stdout } = await cli(['spans', '--format', 'jsonl', ...args]);
      expect(code).toBe(0);
      return lines(stdout).map((l) => (JSON.parse(l) as SpanRow).name);
    };
    expect(await names(['--name', 'GET *'])).toEqual(['GET /a\nnext']);
    expect(await names(['--name', '*next'])).toEqual(['GET /a\nnext']);
    expect(await names(['--attribute', 'note=one*two'])).toEqual(['GET /a\nnext']);
  });

  test('the waterfall matches span ids in either case: of parents, duplicates and log records', async () => {
    const cli = await writeDir(
      'id-case',
      [
        span('00000000000000AA', '', 'root', 0n, 100_000_000n),
        span('00000000000000bb', '00000000000000aa', 'child', 10_000_000n, 20_000_000n),
        span('00000000000000BB', '00000000000000AA', 'child', 10_000_000n, 20_000_000n),
      ],
      [
        {
          traceId: TRACE.toUpperCase(),
          spanId: '00000000000000Bb',
          timeUnixNano: String(T0 + 15_000_000n),
          severityText: 'INFO',
          body: { stringValue: 'in child' },
        },
      ],
    );
    const { code, stdout, stderr } = await cli(['trace', TRACE, '--logs']);
    expect([code, stderr]).toEqual([0, 'otel-s3: 1 span stored twice, shown once\n']);
    expect(
      lines(stdout)
        .slice(2)
        .map(parseLine)
        .map((l) => [l.depth, l.name]),
    ).toEqual([
      [0, 'root'],
      [1, 'child'],
      [2, 'INFO in child'],
    ]);
  });

  test('waterfall notes: spans at the top with a parent said (not found, a cycle), records before or without a time', async () => {
    const ms = 1_000_000n;
    const cli = await writeDir(
      'notes',
      [
        span('0000000000000001', '', 'root', 0n, 100n * ms),
        span('0000000000000002', '00000000000000ff', 'lost parent', 10n * ms, 20n * ms),
        // A cycle, shown from its earliest span, with two spans under it.
        span('000000000000000c', '000000000000000d', 'cyc c', 30n * ms, 40n * ms),
        span('000000000000000d', '000000000000000c', 'cyc d', 31n * ms, 41n * ms),
        span('000000000000000e', '000000000000000c', 'under c', 32n * ms, 33n * ms),
        span('000000000000000f', '000000000000000e', 'under e', 32n * ms, 33n * ms),
      ],
      [
        {
          traceId: TRACE,
          spanId: '0000000000000001',
          timeUnixNano: String(T0 - 20n * ms),
          severityText: 'WARN',
          body: { stringValue: 'early' },
        },
        {
          traceId: TRACE,
          spanId: '0000000000000001',
          severityText: 'INFO',
          body: { stringValue: 'no time' },
        },
      ],
    );
    const { code, stdout, stderr } = await cli(['trace', TRACE, '--logs', '--width', '10']);
    expect([code, stderr]).toEqual([
      0,
      'otel-s3: 1 cycle of parents in this trace: each shown from its earliest span, at the top level\n' +
        'otel-s3: 1 span of this trace has a parent not found: shown at the top level\n',
    ]);
    const body = lines(stdout).slice(2);
    expect(body.find((l) => l.includes('early'))).toMatch(/ -20 ms {3}\|◆ {9}\|$/);
    expect(body.find((l) => l.includes('no time'))).toMatch(/svc {3,}\| {10}\|$/);
  });

  test('a deep span keeps its name: the prefix shows the depth and the last levels', async () => {
    const id = (n: number) => (n + 1).toString(16).padStart(16, '0');
    const name = (n: number) => `level ${n} ${'x'.repeat(12)}`;
    const cli = await writeDir(
      'deep',
      Array.from({ length: 40 }, (_, i) =>
        span(id(i), i === 0 ? '' : id(i - 1), name(i), BigInt(i), 1000n - BigInt(i)),
      ),
    );
    const { code, stdout } = await cli(['trace', TRACE]);
    expect(code).toBe(0);
    const body = lines(stdout).slice(2);
    expect(body).toHaveLength(40);
    body.forEach((line, depth) => {
      expect(line, `depth ${depth}`).toContain(`${name(depth)}   `);
      if (depth > 10) expect(line, `depth ${depth}`).toMatch(new RegExp(`^…\\[${depth}\\] `));
      else if (depth > 0) expect(line, `depth ${depth}`).toMatch(/^[│├└ ]/);
    });
    expect(body[39]).toMatch(/^…\[39\] {28}└─ level 39 /);
  });

  test('a long name is cut between characters, not inside a surrogate pair', async () => {
    const cli = await writeDir('astral', [
      span('0000000000000001', '', `xy${'😀'.repeat(40)}`, 0n, 1n),
    ]);
    const { code, stdout } = await cli(['trace', TRACE]);
    expect(code).toBe(0);
    // 60 UTF-16 units at most, the last the `…`: 2 + 28 × 2 before it.
    expect(lines(stdout)[2]).toMatch(new RegExp(`^xy${'😀'.repeat(28)}… +svc `, 'u'));
  });

  test('a trace of zero-length spans lasts 0 ms', async () => {
    const cli = await writeDir('instant', [
      span('0000000000000001', '', 'z root', 5n, 5n),
      span('0000000000000002', '0000000000000001', 'z child', 5n, 5n),
    ]);
    const { code, stdout } = await cli(['trace', TRACE, '--width', '10']);
    expect(code).toBe(0);
    const [heading, header, ...body] = lines(stdout);
    expect(heading).toBe(
      `trace ${TRACE}: 2 spans, 1 service, 0 ms from 2025-11-30 04:00:00.000 UTC`,
    );
    expect(header).toMatch(/ 0 {6,}0 ms$/);
    expect(body).toEqual([
      expect.stringMatching(/^z root +svc +unset +0 ms {3}\|█ {9}\|$/),
      expect.stringMatching(/^└─ z child +svc +unset +0 ms {3}\|█ {9}\|$/),
    ]);
  });

  test('--format csv on a terminal shows control characters escaped; to a pipe, verbatim', async () => {
    const cli = await writeDir('csv-tty', [
      span('0000000000000001', '', 'red \u001b[31m\u202e', 0n, 1n),
    ]);
    const tty = await cli(['spans', '--format', 'csv'], { stdoutTTY: true });
    expect(tty.code).toBe(0);
    expect(tty.stdout).not.toContain('\u001b');
    expect(tty.stdout).not.toContain('\u202e');
    expect(tty.stdout).toContain(',red \\x1b[31m\\u202e,');
    const pipe = await cli(['spans', '--format', 'csv']);
    expect(pipe.stdout).toContain(',red \u001b[31m\u202e,');
  });

  test('--severity reads a short name with its 1-4 suffix, in any case, when there is no number', async () => {
    const record = (severityText: string) => ({
      timeUnixNano: String(T0),
      severityText,
      body: { stringValue: severityText },
    });
    const cli = await writeDir(
      'severity-text',
      [span('0000000000000001', '', 'root', 0n, 1n)],
      ['INFO4', 'WARN', 'WARN2', 'warning3', 'Error2', 'fatal', 'WARN5', 'loud'].map(record),
    );
    const bodies = async (severity: string) => {
      const { code, stdout } = await cli(['logs', '--format', 'jsonl', '--severity', severity]);
      expect(code).toBe(0);
      return lines(stdout).map((l) => (JSON.parse(l) as LogRecordRow).body);
    };
    expect(await bodies('warn')).toEqual(['WARN', 'WARN2', 'warning3', 'Error2', 'fatal']);
    expect(await bodies('info')).toEqual(['INFO4', 'WARN', 'WARN2', 'warning3', 'Error2', 'fatal']);
    expect(await bodies('error')).toEqual(['Error2', 'fatal']);
    // stats classes them by the same rule: only 'WARN5' and 'loud' name no severity.
    const stats = await cli(['stats', '--format', 'json']);
    expect(stats.code).toBe(0);
    expect((JSON.parse(stats.stdout) as StatsReport).logServices[0]?.severities).toEqual({
      INFO: 1,
      WARN: 3,
      ERROR: 1,
      FATAL: 1,
      UNSET: 2,
    });
  });

  test('a severity number out of 1-24 is no severity: the text decides, for --severity and stats', async () => {
    const record = (severityNumber: number, severityText: string, body: string) => ({
      timeUnixNano: String(T0),
      severityNumber,
      severityText,
      body: { stringValue: body },
    });
    const cli = await writeDir(
      'severity-out-of-range',
      [span('0000000000000001', '', 'root', 0n, 1n)],
      [
        record(30, 'DEBUG', 'debug text'),
        record(99, '', 'no text'),
        record(-3, 'WARN', 'warn text'),
      ],
    );
    const bodies = async (severity: string) => {
      const { code, stdout } = await cli(['logs', '--format', 'jsonl', '--severity', severity]);
      expect(code).toBe(0);
      return lines(stdout).map((l) => (JSON.parse(l) as LogRecordRow).body);
    };
    // Before: 30 and 99 were taken as above FATAL, so --severity fatal kept both.
    expect(await bodies('fatal')).toEqual([]);
    expect(await bodies('warn')).toEqual(['warn text']);
    expect(await bodies('debug')).toEqual(['debug text', 'warn text']);
    const stats = await cli(['stats', '--format', 'json']);
    expect((JSON.parse(stats.stdout) as StatsReport).logServices[0]?.severities).toEqual({
      DEBUG: 1,
      WARN: 1,
      UNSET: 1,
    });
  });

  test('--from and --to past the millisecond: objects of that millisecond are on the right side', async () => {
    // The objects are sealed at 04:00:00.000 exactly (a UUIDv7 holds milliseconds).
    const cli = await writeDir(
      'sub-millisecond-range',
      [span('0000000000000001', '', 'root', 0n, 1n)],
      [{ timeUnixNano: String(T0), body: { stringValue: 'the record' } }],
    );
    const bodies = async (...range: string[]) => {
      const { code, stdout } = await cli(['logs', '--format', 'jsonl', ...range]);
      expect(code).toBe(0);
      return lines(stdout).map((l) => (JSON.parse(l) as LogRecordRow).body);
    };
    // At the edges: --from is inclusive, --to exclusive.
    expect(await bodies('--from', '2026-11-30T04:00:00Z')).toEqual(['the record']);
    expect(await bodies('--to', '2026-11-30T04:00:00Z')).toEqual([]);
    // 100 ns later: the object was sealed before the start, and is before the end.
    expect(await bodies('--from', '2026-11-30T04:00:00.0000001Z')).toEqual([]);
    expect(await bodies('--to', '2026-11-30T04:00:00.0000001Z')).toEqual(['the record']);
    expect(await bodies('--to', '2026-11-30T04:00:00.000999999Z')).toEqual(['the record']);
  });

  test('an int64 attribute past 2^53 is kept exactly, as its decimal text', async () => {
    const int = (key: string, intValue: string | number) => ({ key, value: { intValue } });
    const cli = await writeDir('int64', [
      {
        ...span('0000000000000001', '', 'root', 0n, 1n),
        attributes: [
          int('user.id', '9007199254740993'),
          int('min', '-9223372036854775808'),
          int('small', '42'),
          int('number', 7),
        ],
      },
    ]);
    const jsonl = await cli(['spans', '--format', 'jsonl']);
    expect((JSON.parse(jsonl.stdout) as SpanRow).attributes).toEqual({
      'user.id': '9007199254740993',
      min: '-9223372036854775808',
      small: 42,
      number: 7,
    });
    const found = await cli([
      'spans',
      '--format',
      'jsonl',
      '--attribute',
      'user.id=9007199254740993',
    ]);
    expect(lines(found.stdout)).toHaveLength(1);
    const table = await cli(['spans'], { stdoutTTY: true });
    expect(table.stdout).toContain('user.id=9007199254740993 min=-9223372036854775808 small=42');
    const csv = await cli(['spans', '--format', 'csv']);
    expect(csv.stdout).toContain('""user.id"":""9007199254740993""');
  });
});

/** `text` matched literally inside a RegExp. */
function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
