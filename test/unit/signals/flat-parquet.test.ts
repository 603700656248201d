import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { parquetReadObjects } from 'hyparquet';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { newTally } from '../../../src/encoding/records.js';
import { decodeStoredObjectAsync } from '../../../src/reader/decode-object.js';
import { sealedRows } from '../../../src/signals/flat-parquet/sealed-rows.js';
import { FlatStore } from '../../../src/signals/flat-parquet/store.js';
import { flatEncoder } from '../../../src/signals/flat-parquet/table.js';
import { logsExport } from '../../../src/signals/logs/export.js';
import type { LogRecordLike } from '../../../src/signals/logs/log-record.js';
import { logColumnBuilders } from '../../../src/signals/logs/parquet.js';
import { LOG_RECORDS } from '../../../src/signals/logs/parquet-schema.js';
import { logsRead } from '../../../src/signals/logs/read.js';
import { tracesExport } from '../../../src/signals/traces/export.js';
import { spanColumnBuilders } from '../../../src/signals/traces/parquet.js';
import { SPAN, SPANS } from '../../../src/signals/traces/parquet-schema.js';
import { tracesRead } from '../../../src/signals/traces/read.js';
import { duckdbRows } from '../../support/duckdb.js';
import { nanos, spanRow, texts } from '../../support/otel-rows.js';
import { traceReference } from '../../support/otlp-reference.js';
import { handBuiltSpan } from '../../support/readable-span.js';

/**
 * The Parquet tables of spans and log records (the ClickHouse exporter's otel_traces and
 * otel_logs): the column builders and the writer, checked against DuckDB and hyparquet reading
 * the file, with every expected value spelled here from what the test made.
 */

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'otel-s3-flat-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const noDecompression = {
  decompress: (): Buffer => {
    throw new Error('nothing is compressed here');
  },
  maxDecompressedBytes: 1 << 30,
};

const checkout = { attributes: { 'service.name': 'checkout', zone: 'eu 🌍' } };
const cart = { attributes: { 'service.name': 'cart' } };
const scope = { name: 'http', version: '1.2.3' };
const hex = (n: number, digits: number) => n.toString(16).padStart(digits, '0');

/** 40 spans over 2 services and 8 traces, out of order, with events and links in some. */
function makeSpans() {
  return Array.from({ length: 40 }, (_, i) => {
    const trace = hex((i * 5) % 8, 32);
    const start: [number, number] = [1_700_000_000 + ((i * 7) % 13), 123_456_789 + i];
    return handBuiltSpan({
      name: `op ${i % 4}`,
      kind: i % 5,
      spanContext: () => ({ traceId: trace, spanId: hex(i + 1, 16), traceFlags: 1 }),
      ...(i % 3 === 0
        ? { parentSpanContext: { traceId: trace, spanId: hex(1000 + i, 16), traceFlags: 1 } }
        : {}),
      startTime: start,
      endTime: [start[0] + 1, 999_999_999],
      resource: i % 2 === 0 ? checkout : cart,
      instrumentationScope: scope,
      attributes: i % 4 === 0 ? {} : { i, 'name 𝄞': `v${i}`, empty: null, list: [1, 'a'] },
      status: { code: i % 3, ...(i % 3 === 2 ? { message: 'failed' } : {}) },
      events:
        i % 2 === 0
          ? [
              { time: [start[0], 5], name: 'first', attributes: {} },
              { time: [start[0], 6], name: 'second', attributes: { k: i, n: null } },
            ]
          : [],
      links:
        i % 5 === 0
          ? [
              {
                context: { traceId: hex(99, 32), spanId: hex(98, 16), traceFlags: 0 },
                attributes: { reason: 'retry' },
              },
            ]
          : [],
    });
  });
}

const KINDS = ['Internal', 'Server', 'Client', 'Producer', 'Consumer'];

async function spansFile(
  spans: ReturnType<typeof makeSpans>,
  options: { rowGroupRows?: number; pageValues?: number } = {},
) {
  const builders = spanColumnBuilders();
  builders.append(spans, newTally(false));
  const file = await flatEncoder(SPANS)(builders.seal(), { compression: 'none', ...options });
  const path = join(dir, `spans-${Math.random().toString(36).slice(2)}.parquet`);
  await writeFile(path, file);
  return { file, path };
}

describe('spans as the otel_traces table', () => {
  test('the columns and types of otel_traces, as DuckDB reads them', async () => {
    const { path } = await spansFile(makeSpans());
    const columns = await duckdbRows(`DESCRIBE SELECT * FROM read_parquet('${path}')`);
    const map = 'MAP(VARCHAR, VARCHAR)';
    expect(columns.map((c) => [c.column_name, c.column_type])).toEqual([
      ['Timestamp', 'TIMESTAMP WITH TIME ZONE'],
      ['TraceId', 'VARCHAR'],
      ['SpanId', 'VARCHAR'],
      ['ParentSpanId', 'VARCHAR'],
      ['TraceState', 'VARCHAR'],
      ['SpanName', 'VARCHAR'],
      ['SpanKind', 'VARCHAR'],
      ['ServiceName', 'VARCHAR'],
      ['ResourceAttributes', map],
      ['ScopeName', 'VARCHAR'],
      ['ScopeVersion', 'VARCHAR'],
      ['SpanAttributes', map],
      ['Duration', 'BIGINT'],
      ['StatusCode', 'VARCHAR'],
      ['StatusMessage', 'VARCHAR'],
      ['Events.Timestamp', 'TIMESTAMP WITH TIME ZONE[]'],
      ['Events.Name', 'VARCHAR[]'],
      ['Events.Attributes', `${map}[]`],
      ['Links.TraceId', 'VARCHAR[]'],
      ['Links.SpanId', 'VARCHAR[]'],
      ['Links.TraceState', 'VARCHAR[]'],
      ['Links.Attributes', `${map}[]`],
    ]);
  });

  for (const options of [{}, { rowGroupRows: 7, pageValues: 5 }]) {
    test(`every value, nanoseconds exact (hyparquet), sorted by ServiceName, StatusCode, TraceId, Timestamp ${JSON.stringify(options)}`, async () => {
      const spans = makeSpans();
      const { file } = await spansFile(spans, options);
      const rows = await parquetReadObjects({
        file: file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength) as ArrayBuffer,
        parsers: { timestampFromNanoseconds: (n: bigint) => n } as never,
      });
      // The maps as hyparquet reads them: objects.
      const expected = spans
        .map((s) => spanRow(s, (attrs) => Object.fromEntries(texts(attrs))))
        .sort(
          (a, b) =>
            (a.ServiceName < b.ServiceName ? -1 : a.ServiceName > b.ServiceName ? 1 : 0) ||
            (a.StatusCode < b.StatusCode ? -1 : a.StatusCode > b.StatusCode ? 1 : 0) ||
            (a.TraceId < b.TraceId ? -1 : a.TraceId > b.TraceId ? 1 : 0) ||
            (a.Timestamp < b.Timestamp ? -1 : a.Timestamp > b.Timestamp ? 1 : 0),
        );
      expect(rows).toEqual(expected);
    });
  }

  test('attribute values new in nearly every span (then repeated): every value back, each stored once', async () => {
    // 'path' is new in each of the first 150 spans (its values are no longer looked up after the
    // first 64) and repeats them after; 'port' a number, the same; 'tier' takes turns.
    const long = 'x'.repeat(40);
    const spans = makeSpans().flatMap((span, i) =>
      Array.from({ length: 8 }, (_, j) => {
        const k = i * 8 + j;
        return handBuiltSpan({
          ...span,
          spanContext: () => ({ ...span.spanContext(), spanId: hex(k + 1, 16) }),
          attributes: {
            path: `/api/v1/items/${k % 150}/${long}`,
            port: 40_000 + (k % 150),
            tier: k % 2 === 0 ? 'gold' : 'silver',
            same: `/api/v1/items/7/${long}`,
          },
        });
      }),
    );
    const { file, path } = await spansFile(spans);
    const got = await duckdbRows(
      `SELECT "SpanId", "SpanAttributes" FROM read_parquet('${path}') ORDER BY "SpanId"`,
    );
    const want = spans
      .map((s) => ({
        SpanId: s.spanContext().spanId,
        SpanAttributes: texts(s.attributes).map(([key, value]) => ({ key, value })),
      }))
      .toSorted((a, b) => (a.SpanId < b.SpanId ? -1 : 1));
    expect(got).toEqual(want);
    // The values' dictionary: every distinct text once (150 paths, 150 ports, 2 tiers), the
    // dictionary page no larger than those entries and its header.
    const [chunk] = await duckdbRows(
      `SELECT dictionary_page_offset::BIGINT AS d, data_page_offset::BIGINT AS p
       FROM parquet_metadata('${path}') WHERE path_in_schema = 'SpanAttributes, key_value, value'`,
    );
    const distinct = new Set(want.flatMap((w) => w.SpanAttributes.map((e) => e.value)));
    expect(distinct.size).toBe(302);
    const entries = [...distinct].reduce((n, v) => n + 4 + Buffer.byteLength(String(v)), 0);
    const dictionaryPage = Number(chunk?.p) - Number(chunk?.d);
    expect(dictionaryPage).toBeGreaterThanOrEqual(entries);
    expect(dictionaryPage).toBeLessThan(entries + 32);
    expect(file.length).toBeGreaterThan(0);
  });

  test('min/max statistics of the columns lookups filter on, per row group (DuckDB)', async () => {
    const spans = makeSpans();
    const { path } = await spansFile(spans, { rowGroupRows: 16 });
    const stats = await duckdbRows(
      `SELECT row_group_id, path_in_schema, stats_min_value, stats_max_value
       FROM parquet_metadata('${path}')
       WHERE path_in_schema IN ('ServiceName', 'TraceId', 'StatusCode', 'Duration')
       ORDER BY row_group_id, path_in_schema`,
    );
    // The rows in the order the file has them: the statistics are those of each 16.
    const rows = await duckdbRows(
      `SELECT "ServiceName", "TraceId", "StatusCode", "Duration"::VARCHAR AS "Duration"
       FROM read_parquet('${path}', file_row_number = true) ORDER BY file_row_number`,
    );
    const expected = [];
    for (let g = 0; g * 16 < rows.length; g++) {
      const group = rows.slice(g * 16, g * 16 + 16);
      for (const column of ['Duration', 'ServiceName', 'StatusCode', 'TraceId']) {
        const values = group.map((r) => String(r[column]));
        const sorted =
          column === 'Duration'
            ? values.toSorted((a, b) => Number(BigInt(a) - BigInt(b)))
            : values.toSorted();
        expected.push({
          row_group_id: String(g),
          path_in_schema: column,
          stats_min_value: sorted[0],
          stats_max_value: sorted.at(-1),
        });
      }
    }
    expect(stats).toEqual(expected);
    // Within a service, its error spans first, one run of rows (the error spans of one service
    // are read from one stretch); within a service and status, a trace's spans are one run.
    const cart = rows.filter((r) => r.ServiceName === 'cart');
    const statuses = cart.map((r) => String(r.StatusCode));
    expect(statuses).toEqual(statuses.toSorted());
    expect(statuses.filter((s) => s === 'Error').length).toBeGreaterThan(1);
    expect(statuses[0]).toBe('Error');
    for (const status of new Set(statuses)) {
      const ids = cart.filter((r) => r.StatusCode === status).map((r) => String(r.TraceId));
      expect(ids).toEqual(ids.toSorted());
    }
  });

  test("the OTLP fallback's rows keep a string's leading U+FEFF", () => {
    const store = new FlatStore(SPANS);
    const r = store.addRow();
    store.string(SPAN.SPAN_NAME, r, '\uFEFFname');
    store.set(SPAN.SPAN_ATTRIBUTES, r, store.newSet(['\uFEFFk'], ['\uFEFFv']));
    const [row] = sealedRows(SPANS, store.seal());
    // Before: a default TextDecoder gave 'name', { k: 'v' }.
    expect(row?.SpanName).toBe('\uFEFFname');
    expect(row?.SpanAttributes).toEqual({ '\uFEFFk': '\uFEFFv' });
  });

  test('an append is all or nothing; bytes are the memory held; seal starts empty', () => {
    const builders = spanColumnBuilders();
    expect(builders.bytes).toBe(0);
    const spans = makeSpans();
    const tally = newTally(false);
    builders.append(spans.slice(0, 10), tally);
    expect([builders.rows, tally.items]).toEqual([10, 10]);
    const held = builders.bytes;
    expect(held).toBeGreaterThan(10 * 22 * 4);
    const broken = [...spans.slice(10, 15)];
    broken.push(
      handBuiltSpan({
        name: 'broken',
        spanContext: () => {
          throw new Error('no context');
        },
        startTime: [1, 0],
        endTime: [2, 0],
        resource: cart,
        instrumentationScope: scope,
      }),
    );
    expect(() => builders.append(broken, tally)).toThrow('no context');
    expect([builders.rows, tally.items]).toEqual([10, 10]);
    builders.append(spans.slice(10), tally);
    expect(builders.rows).toBe(40);
    expect(builders.bytes).toBeGreaterThan(held);
    const sealed = builders.seal();
    expect(sealed.rows).toBe(40);
    expect([builders.rows, builders.bytes]).toEqual([0, 0]);
  });

  test('the OTLP/JSON fallback is the official message of the same spans, as the table keeps them', async () => {
    const spans = makeSpans();
    const builders = spanColumnBuilders();
    builders.append(spans, newTally(false));
    const records = await tracesExport.columnsAsRecords(builders.seal());
    const message = traceReference.decodeJsonExact(
      `{"resourceSpans":[${records.map((r) => r.toString('utf8')).join(',')}]}`,
    ) as { resourceSpans: { scopeSpans: { spans: Record<string, unknown>[] }[] }[] };
    const got = message.resourceSpans
      .flatMap((r) => r.scopeSpans.flatMap((s) => s.spans))
      .map((s) => [
        s.spanId,
        s.name,
        s.startTimeUnixNano,
        s.endTimeUnixNano,
        s.kind,
        ((s.events ?? []) as Record<string, unknown>[]).map((e) => `${e.name}@${e.timeUnixNano}`),
        ((s.links ?? []) as Record<string, unknown>[]).map((l) => l.spanId),
      ]);
    const want = spans.map((s) => [
      Buffer.from(s.spanContext().spanId, 'hex').toString('base64'),
      s.name,
      String(nanos(s.startTime)),
      String(nanos(s.endTime)),
      `SPAN_KIND_${KINDS[s.kind]?.toUpperCase()}`,
      s.events.map((e) => `${e.name}@${nanos(e.time)}`),
      s.links.map((l) => Buffer.from(l.context.spanId, 'hex').toString('base64')),
    ]);
    expect(got.map((g) => JSON.stringify(g)).toSorted()).toEqual(
      want.map((w) => JSON.stringify(w)).toSorted(),
    );
  });

  test("the reader's decoder: a file of spans back to its spans; another table's file is refused", async () => {
    const spans = makeSpans();
    const { file } = await spansFile(spans);
    const request = (await tracesRead.decoders.parquet.decode(
      Buffer.from(file),
      noDecompression as never,
    )) as { resourceSpans: { scopeSpans: { spans: { spanId: string }[] }[] }[] };
    const ids = request.resourceSpans.flatMap((r) =>
      r.scopeSpans.flatMap((s) => s.spans.map((x) => x.spanId)),
    );
    expect(ids.toSorted()).toEqual(spans.map((s) => s.spanContext().spanId).toSorted());
    await expect(
      logsRead.decoders.parquet.decode(Buffer.from(file), noDecompression as never),
    ).rejects.toThrow('schema version logs-1 (otel_s3.schema_version: traces-1)');
  });

  test('decodeStoredObjectAsync of a spans file under a name without its signal says whose it is', async () => {
    const { file } = await spansFile(makeSpans());
    await expect(decodeStoredObjectAsync('foo/bar.parquet', file)).rejects.toThrow(
      "foo/bar.parquet: a Parquet file of traces (otel_s3.schema_version: traces-1), not of metrics: pass signal: 'traces' to decode it",
    );
    const decoded = await decodeStoredObjectAsync('foo/bar.parquet', file, { signal: 'traces' });
    expect(decoded.encoding.format).toBe('parquet');
  });
});

function makeLogs(): LogRecordLike[] {
  return Array.from({ length: 12 }, (_, i) => ({
    resource: i % 2 === 0 ? checkout : cart,
    instrumentationScope: { name: 'app', version: '1', attributes: { tier: 'gold' } },
    hrTime: i === 3 ? [0, 0] : [1_700_000_000 + i, 987_654_321],
    hrTimeObserved: [1_700_000_100, 1],
    ...(i % 2 === 0
      ? { spanContext: { traceId: hex(i, 32), spanId: hex(i, 16), traceFlags: 1 } }
      : {}),
    severityText: i % 3 === 0 ? 'ERROR' : 'INFO',
    severityNumber: i % 3 === 0 ? 17 : 9,
    body: [`message ${i} 😀`, 42, true, { a: 1 }][i % 4],
    ...(i % 4 === 0 ? { eventName: 'e' } : {}),
    attributes: { i, s: 'x' },
    droppedAttributesCount: 0,
  }));
}

describe('log records as the otel_logs table', () => {
  test('every value as DuckDB reads it; a record without a time has its observed time', async () => {
    const logs = makeLogs();
    const builders = logColumnBuilders();
    builders.append(logs, newTally(false));
    const file = await flatEncoder(LOG_RECORDS)(builders.seal(), { compression: 'none' });
    const path = join(dir, 'logs.parquet');
    await writeFile(path, file);
    const rows = await duckdbRows(
      `SELECT * REPLACE (epoch_ns("Timestamp")::VARCHAR AS "Timestamp",
         map_entries("ResourceAttributes") AS "ResourceAttributes",
         map_entries("ScopeAttributes") AS "ScopeAttributes",
         map_entries("LogAttributes") AS "LogAttributes")
       FROM read_parquet('${path}')`,
    );
    const kv = (attrs: Record<string, unknown>) =>
      Object.entries(attrs).map(([key, value]) => ({ key, value: String(value) }));
    const bodyText = (b: unknown) => (typeof b === 'object' ? JSON.stringify(b) : String(b));
    const expected = logs.map((r) => {
      const time = r.hrTime[0] === 0 ? r.hrTimeObserved : r.hrTime;
      return {
        // DuckDB reads nanoseconds of UTC as microseconds.
        Timestamp: String((nanos(time) / 1000n) * 1000n),
        TraceId: r.spanContext?.traceId ?? '',
        SpanId: r.spanContext?.spanId ?? '',
        TraceFlags: r.spanContext?.traceFlags ?? 0,
        SeverityText: r.severityText,
        SeverityNumber: r.severityNumber,
        ServiceName: String(r.resource.attributes['service.name']),
        Body: bodyText(r.body),
        ResourceSchemaUrl: '',
        ResourceAttributes: kv(r.resource.attributes),
        ScopeSchemaUrl: '',
        ScopeName: 'app',
        ScopeVersion: '1',
        ScopeAttributes: [{ key: 'tier', value: 'gold' }],
        LogAttributes: kv(r.attributes),
        EventName: r.eventName ?? '',
      };
    });
    const order = (a: (typeof expected)[number], b: (typeof expected)[number]) =>
      a.ServiceName.localeCompare(b.ServiceName) ||
      (a.TraceId < b.TraceId ? -1 : a.TraceId > b.TraceId ? 1 : 0) ||
      Number(BigInt(a.Timestamp) - BigInt(b.Timestamp));
    expect(rows).toEqual(expected.sort(order));
    // The reader's decoder and the fallback give the same request.
    const read = await logsRead.decoders.parquet.decode(
      Buffer.from(file),
      noDecompression as never,
    );
    const again = logColumnBuilders();
    again.append(logs, newTally(false));
    const records = await logsExport.columnsAsRecords(again.seal());
    const count = (request: unknown) =>
      (
        request as { resourceLogs: { scopeLogs: { logRecords: unknown[] }[] }[] }
      ).resourceLogs.flatMap((r) => r.scopeLogs.flatMap((s) => s.logRecords)).length;
    expect(count(read)).toBe(12);
    expect(count({ resourceLogs: records.map((r) => JSON.parse(r.toString('utf8'))) })).toBe(12);
  });
});

describe('text columns (ids, bodies: PLAIN, no dictionary)', () => {
  test('rows in the order of ServiceName, TraceId (bytes), Timestamp, then as they came: any mix of ties', async () => {
    const text = fc.constantFrom(
      '',
      'a',
      'ab',
      'abcdefab',
      'abcdefab0',
      'abcdefac',
      'é',
      '😀',
      'z',
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            service: fc.constantFrom('cart', 'checkout', 'é-shop', 'a'),
            traceId: text,
            nanos: fc.integer({ min: 0, max: 3 }),
          }),
          { minLength: 1, maxLength: 120 },
        ),
        async (items) => {
          const records: LogRecordLike[] = items.map((item, i) => ({
            resource: { attributes: { 'service.name': item.service } },
            instrumentationScope: { name: 'app' },
            hrTime: [1_700_000_000, item.nanos],
            hrTimeObserved: [1_700_000_000, item.nanos],
            spanContext: { traceId: item.traceId, spanId: hex(i, 16), traceFlags: 1 },
            body: '',
            attributes: {},
            droppedAttributesCount: 0,
          }));
          const builders = logColumnBuilders();
          builders.append(records, newTally(false));
          const file = await flatEncoder(LOG_RECORDS)(builders.seal(), { compression: 'none' });
          const rows = await parquetReadObjects({
            file: file.buffer.slice(
              file.byteOffset,
              file.byteOffset + file.byteLength,
            ) as ArrayBuffer,
            columns: ['SpanId'],
          });
          const utf8 = (t: string) => Buffer.from(t);
          const expected = items
            .map((item, i) => ({ ...item, i }))
            .sort(
              (a, b) =>
                Buffer.compare(utf8(a.service), utf8(b.service)) ||
                Buffer.compare(utf8(a.traceId), utf8(b.traceId)) ||
                a.nanos - b.nanos ||
                a.i - b.i,
            )
            .map((item) => hex(item.i, 16));
          expect(rows.map((r) => r.SpanId)).toEqual(expected);
        },
      ),
      { numRuns: 150 },
    );
  });

  test('any text, as long as it comes, back as its UTF-8; rows sorted by its bytes; a failed append leaves nothing', async () => {
    const bodies = [
      '',
      'plain',
      'ascii first, then é, 😀 and 𝄞',
      'lone \uD800 surrogate and \uDFFF',
      'é at the start',
      'y'.repeat(20_000),
      '😀',
    ];
    // Ids sharing their first bytes (and more than 6 of them), one a prefix of another.
    const traceIds = [
      '',
      'abcdefab',
      'abcdefa',
      'abcdef00',
      'abcdefabcdef01',
      'abcdefabcdef0',
      'ab',
    ];
    const records = (from: number, n: number): LogRecordLike[] =>
      Array.from({ length: n }, (_, k) => {
        const i = from + k;
        return {
          resource: cart,
          instrumentationScope: { name: 'app' },
          hrTime: [1_700_000_000, i],
          hrTimeObserved: [1_700_000_000, i],
          spanContext: {
            traceId: traceIds[i % traceIds.length] as string,
            spanId: hex(i, 16),
            traceFlags: 1,
          },
          body: `${bodies[i % bodies.length]}#${i}`,
          // Two keys that are one in UTF-8 (the last value kept), as the Collector's Go map has it.
          attributes: i % 5 === 0 ? { 'k\uD800': 1, plain: 'é', 'k\uDC00': i } : { n: i },
          droppedAttributesCount: 0,
        };
      });
    const builders = logColumnBuilders();
    builders.append(records(0, 20), newTally(false));
    // Its texts are written before its attributes throw: taken back, overwritten by the next.
    const broken = records(20, 3);
    Object.defineProperty(broken[2], 'attributes', {
      get() {
        throw new Error('no attributes');
      },
    });
    expect(() => builders.append(broken, newTally(false))).toThrow('no attributes');
    builders.append(records(20, 30), newTally(false));
    const logs = records(0, 50);
    const file = await flatEncoder(LOG_RECORDS)(builders.seal(), {
      compression: 'none',
      rowGroupRows: 16,
    });
    const rows = await parquetReadObjects({
      file: file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength) as ArrayBuffer,
      columns: ['TraceId', 'SpanId', 'Body', 'LogAttributes'],
    });
    const utf8 = (s: string) => Buffer.from(s.toWellFormed());
    const expected = logs
      .map((r) => ({
        TraceId: r.spanContext?.traceId,
        SpanId: r.spanContext?.spanId,
        Body: (r.body as string).toWellFormed(),
        LogAttributes:
          Number(r.hrTime[1]) % 5 === 0
            ? { 'k\uFFFD': String(r.hrTime[1]), plain: 'é' }
            : { n: String(r.hrTime[1]) },
      }))
      .sort((a, b) => Buffer.compare(utf8(a.TraceId as string), utf8(b.TraceId as string)));
    expect(rows).toEqual(expected);
    // Each key once, in its first place (DuckDB reads the map's entries as the file has them).
    const path = join(dir, 'texts.parquet');
    await writeFile(path, file);
    const maps = await duckdbRows(
      `SELECT map_entries("LogAttributes") AS e FROM read_parquet('${path}', file_row_number = true) ORDER BY file_row_number`,
    );
    expect(maps.map((m) => m.e)).toEqual(
      expected.map((r) => Object.entries(r.LogAttributes).map(([key, value]) => ({ key, value }))),
    );
    // The OTLP/JSON fallback reads the same texts back from the sealed columns.
    const again = logColumnBuilders();
    again.append(logs, newTally(false));
    const fallback = (await logsExport.columnsAsRecords(again.seal())).flatMap((r) =>
      (
        JSON.parse(r.toString('utf8')) as {
          scopeLogs: { logRecords: { body: { stringValue: string }; traceId: string }[] }[];
        }
      ).scopeLogs.flatMap((s) => s.logRecords.map((l) => l.body.stringValue)),
    );
    expect(fallback).toEqual(logs.map((r) => (r.body as string).toWellFormed()));
  });
});
