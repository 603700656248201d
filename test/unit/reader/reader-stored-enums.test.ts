import { join } from 'node:path';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { newTally } from '../../../src/encoding/records.js';
import {
  type LogRecordRow,
  logRecordRows,
  readLogRecords,
  readSpans,
  type SpanRow,
  spanRows,
  type UnreadableObject,
} from '../../../src/reader.js';
import { flatEncoder } from '../../../src/signals/flat-parquet/table.js';
import { spanColumnBuilders } from '../../../src/signals/traces/parquet.js';
import { SPANS } from '../../../src/signals/traces/parquet-schema.js';
import { runCliInProcess } from '../../support/cli-child.js';
import { collect, EXTENSION, writeAtKey } from '../../support/reader-fixtures.js';
import { recordTrace, signalKeyAt } from '../../support/signal-fixtures.js';
import { makeTempDir, removeDir } from '../../support/temp-dir.js';
import { READER_T0 } from '../../support/time.js';
import { v1File } from '../../support/v1-pages.js';

/**
 * Another writer's object may hold an enum value this package never writes: a span kind of 7
 * (a later OTLP's, or a bug's), a status code of 5, a severity number of 2.5. A row shows the
 * value stored, never a made-up 'unspecified', 'unset' or 0 that a filter would then take for
 * the real one. Expected values are the bytes each test writes.
 */

let dir: string;
beforeAll(async () => {
  dir = await makeTempDir('otel-s3-stored-enums-');
});
afterAll(() => removeDir(dir));

const TRACE = '5b8efff798038103d269b633813fc60c';
const SPAN = 'eee19b7ec3c1b174';

/** One span's ExportTraceServiceRequest in OTLP/JSON, with its `kind` and status `code` as given. */
const spanJson = (kind: unknown, code: unknown): string =>
  JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'cart' } }] },
        scopeSpans: [
          {
            scope: { name: 's' },
            spans: [
              {
                traceId: TRACE,
                spanId: SPAN,
                name: 'add item',
                kind,
                startTimeUnixNano: '1764475200000000000',
                endTimeUnixNano: '1764475200060000000',
                status: { code },
              },
            ],
          },
        ],
      },
    ],
  });

/** One log record's ExportLogsServiceRequest in OTLP/JSON, with its `severityNumber` as given. */
const logJson = (severityNumber: unknown, severityText?: string): string =>
  JSON.stringify({
    resourceLogs: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'cart' } }] },
        scopeLogs: [
          {
            scope: { name: 's' },
            logRecords: [
              {
                timeUnixNano: '1764475200000000000',
                severityNumber,
                ...(severityText === undefined ? {} : { severityText }),
                body: { stringValue: 'out of stock' },
              },
            ],
          },
        ],
      },
    ],
  });

/** Protobuf by hand: a varint, and a length-delimited field. */
const varint = (n: number): number[] => {
  // An int32 below 0 is written sign-extended to 64 bits, as protobuf runtimes write it.
  let v = BigInt.asUintN(64, BigInt(n));
  const out: number[] = [];
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return out;
};
const field = (number: number, bytes: number[]): number[] => [
  (number << 3) | 2,
  ...varint(bytes.length),
  ...bytes,
];
const text = (s: string): number[] => [...Buffer.from(s)];

/** A span of kind `kind` and status code `code` (Span.kind is field 6, Status.code field 3). */
const spanProto = (kind: number, code: number): Uint8Array =>
  Uint8Array.from(
    field(
      1,
      field(
        2,
        field(2, [
          ...field(5, text('add item')),
          0x30,
          ...varint(kind),
          ...field(15, [0x18, ...varint(code)]),
        ]),
      ),
    ),
  );

/** A log record of severity number `n` (LogRecord.severity_number is field 2). */
const logProto = (n: number): Uint8Array =>
  Uint8Array.from(field(1, field(2, field(2, [0x10, ...varint(n)]))));

let reads = 0;
async function readOne(
  name: string,
  signal: 'traces' | 'logs',
  format: 'otlp-json' | 'otlp-proto' | 'parquet',
  bytes: Uint8Array,
) {
  const root = join(dir, `${name}-${++reads}`);
  const extension = format === 'parquet' ? '.parquet' : EXTENSION[format];
  await writeAtKey(root, signalKeyAt(signal, format, 'p', READER_T0, extension), bytes);
  const problems: UnreadableObject[] = [];
  const read = signal === 'traces' ? readSpans : readLogRecords;
  const objects = await collect(read({ dir: root, prefix: 'p', onError: (p) => problems.push(p) }));
  expect(problems).toEqual([]);
  return { root, objects };
}

const spanOf = (objects: { request: Parameters<typeof spanRows>[0] }[]): SpanRow => {
  const rows = objects.flatMap((o) => spanRows(o.request));
  expect(rows).toHaveLength(1);
  return rows[0] as SpanRow;
};
const logOf = (objects: { request: Parameters<typeof logRecordRows>[0] }[]): LogRecordRow => {
  const rows = objects.flatMap((o) => logRecordRows(o.request));
  expect(rows).toHaveLength(1);
  return rows[0] as LogRecordRow;
};

describe('a span kind or status code outside the enums is shown as stored', () => {
  test.each([
    [7, 5, '7', '5'],
    [-1, -2, '-1', '-2'],
    [2.5, 1.5, '2.5', '1.5'],
    ['SPAN_KIND_LATER', 'STATUS_CODE_LATER', 'SPAN_KIND_LATER', 'STATUS_CODE_LATER'],
    ['7', '5', '7', '5'],
  ])('OTLP/JSON kind %j, code %j', async (kind, code, shownKind, shownStatus) => {
    const { objects } = await readOne(
      `json-${shownKind}`,
      'traces',
      'otlp-json',
      Buffer.from(spanJson(kind, code)),
    );
    const row = spanOf(objects);
    expect([row.kind, row.status]).toEqual([shownKind, shownStatus]);
  });

  test('the enums themselves, by number and name, are their words', async () => {
    for (const [kind, code] of [
      [2, 2],
      ['SPAN_KIND_SERVER', 'STATUS_CODE_ERROR'],
    ]) {
      const row = spanRows(JSON.parse(spanJson(kind, code)))[0] as SpanRow;
      expect([row.kind, row.status]).toEqual(['server', 'error']);
    }
    const row = spanRows(JSON.parse(spanJson(undefined, undefined)))[0] as SpanRow;
    expect([row.kind, row.status]).toEqual(['unspecified', 'unset']);
  });

  test.each([
    [7, 5],
    [-1, -2],
  ])('OTLP protobuf kind %d, code %d', async (kind, code) => {
    const { objects } = await readOne(
      `proto-${kind}`,
      'traces',
      'otlp-proto',
      spanProto(kind, code),
    );
    const row = spanOf(objects);
    expect([row.kind, row.status]).toEqual([String(kind), String(code)]);
  });

  test('Parquet: a SpanKind or StatusCode text not of the table is shown as stored', async () => {
    const builders = spanColumnBuilders();
    builders.append((await recordTrace()).spans.slice(0, 1), newTally(false));
    const file = new Uint8Array(await flatEncoder(SPANS)(builders.seal(), { compression: 'none' }));
    const metadata = parquetMetadata(file.slice().buffer);
    const rows = (await parquetReadObjects({ file: file.slice().buffer })) as Record<
      string,
      unknown
    >[];
    (rows[0] as Record<string, unknown>).SpanKind = 'Later';
    (rows[0] as Record<string, unknown>).StatusCode = 'Failed';
    const { root, objects } = await readOne(
      'parquet',
      'traces',
      'parquet',
      v1File(metadata.schema, metadata.key_value_metadata ?? [], rows),
    );
    const row = spanOf(objects);
    expect([row.kind, row.status]).toEqual(['Later', 'Failed']);

    // Nor does a filter take it for one of the API's statuses.
    for (const status of ['unset', 'ok', 'error']) {
      const run = await runCliInProcess(
        ['spans', '--dir', root, '--prefix', 'p', '--status', status, '--format', 'jsonl'],
        { cwd: root },
      );
      expect(run.stdout).toBe('');
    }
  });

  test("the waterfall escapes a stored status's control characters", async () => {
    const { root } = await readOne(
      'escape',
      'traces',
      'otlp-json',
      Buffer.from(spanJson(2, 'STATUS_\u001b[2J')),
    );
    const run = await runCliInProcess(['trace', TRACE, '--dir', root, '--prefix', 'p'], {
      cwd: root,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('add item');
    expect(run.stdout).not.toContain('\u001b');
  });
});

describe('a severity number is shown as stored', () => {
  test.each([
    [2.5, 2.5, ''],
    [-3, -3, ''],
    [25, 25, ''],
    ['-3', -3, ''],
    [17, 17, 'ERROR'],
    ['SEVERITY_NUMBER_WARN', 13, 'WARN'],
  ])('OTLP/JSON %j', async (stored, severityNumber, severity) => {
    const { objects } = await readOne(
      `log-json-${String(stored)}`,
      'logs',
      'otlp-json',
      Buffer.from(logJson(stored)),
    );
    const row = logOf(objects);
    expect([row.severityNumber, row.severity]).toEqual([severityNumber, severity]);
  });

  test.each([
    [undefined, 'SEVERITY_NUMBER_LATER'],
    ['Later', 'Later'],
  ])(
    'OTLP/JSON: a name of no severity number is the number as stored, with text %j',
    async (text, severity) => {
      const { objects } = await readOne(
        `log-json-name-${String(text)}`,
        'logs',
        'otlp-json',
        Buffer.from(logJson('SEVERITY_NUMBER_LATER', text)),
      );
      const row = logOf(objects);
      expect([row.severityNumber, row.severity]).toEqual(['SEVERITY_NUMBER_LATER', severity]);
    },
  );

  test('--severity reads a name of no severity number as none, by the text', async () => {
    const { root } = await readOne(
      'log-cli-name',
      'logs',
      'otlp-json',
      Buffer.from(logJson('SEVERITY_NUMBER_LATER', 'warn')),
    );
    const severity = async (least: string) =>
      (
        await runCliInProcess(
          ['logs', '--dir', root, '--prefix', 'p', '--severity', least, '--format', 'jsonl'],
          { cwd: root },
        )
      ).stdout;
    expect(JSON.parse(await severity('warn')).severityNumber).toBe('SEVERITY_NUMBER_LATER');
    expect(await severity('error')).toBe('');
  });

  test.each([-3, 25])('OTLP protobuf %d', async (n) => {
    const { objects } = await readOne(`log-proto-${n}`, 'logs', 'otlp-proto', logProto(n));
    expect(logOf(objects).severityNumber).toBe(n);
  });

  test('--severity does not take 2.5 for TRACE2, nor -3 for anything', async () => {
    for (const stored of [2.5, -3]) {
      const { root } = await readOne(
        `log-cli-${stored}`,
        'logs',
        'otlp-json',
        Buffer.from(logJson(stored)),
      );
      const all = await runCliInProcess(
        ['logs', '--dir', root, '--prefix', 'p', '--format', 'jsonl'],
        {
          cwd: root,
        },
      );
      expect(JSON.parse(all.stdout).severityNumber).toBe(stored);
      const run = await runCliInProcess(
        ['logs', '--dir', root, '--prefix', 'p', '--severity', 'trace', '--format', 'jsonl'],
        { cwd: root },
      );
      expect(run.stdout).toBe('');
    }
  });
});
