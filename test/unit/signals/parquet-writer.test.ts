import { gunzipSync } from 'node:zlib';
import { ValueType } from '@opentelemetry/api';
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { describe, expect, test } from 'vitest';
import { createPageCompressor } from '../../../src/compression/compressors.js';
import { builtInZstd } from '../../../src/compression/zstd-engine.js';
import { decodeJsonRequest } from '../../../src/encoding/decode-request.js';
import { STORE_BELOW, storedPage } from '../../../src/parquet/stored-pages.js';
import { resourceMetricsToJsonBytes } from '../../../src/signals/metrics/otlp-json.js';
import { MetricColumnBuilders } from '../../../src/signals/metrics/parquet/column-builders.js';
import { CREATED_BY, encodeParquet } from '../../../src/signals/metrics/parquet/encode.js';
import { ParquetFileWriter } from '../../../src/signals/metrics/parquet/file-writer.js';
import { parquetToRequest } from '../../../src/signals/metrics/parquet/read.js';
import { SCHEMA_VERSION, SCHEMA_VERSION_KEY } from '../../../src/signals/metrics/parquet/schema.js';
import { sealedColumnsToRequest } from '../../../src/signals/metrics/parquet/to-request.js';
import { dataPointRows } from '../../../src/signals/metrics/rows.js';
import { parquetHeader, readPlain } from '../../support/hyparquet-internals.js';
import { collectingProvider, recordEveryInstrument } from '../../support/service.js';
import { zstdDecompress } from '../../support/zstd.js';

const zstdEngine = builtInZstd() ? 'node:zlib' : 'zstd-napi';
const decompression = {
  decompress: (compression: 'zstd' | 'gzip', input: Uint8Array) =>
    new Uint8Array(compression === 'zstd' ? zstdDecompress(input) : gunzipSync(input)),
  maxDecompressedBytes: 1 << 28,
};
const pages = (compression: 'zstd' | 'gzip' | 'none', level = 3) =>
  createPageCompressor({ compression, level, engine: zstdEngine }).compressPage;

async function everyInstrument(rounds = 2): Promise<ResourceMetrics[]> {
  const { provider, collect } = collectingProvider('columns-test');
  const out: ResourceMetrics[] = [];
  for (let i = 0; i < rounds; i++) {
    recordEveryInstrument(provider);
    out.push(await collect());
  }
  await provider.shutdown();
  return out;
}

/** Many series of a counter: chunks large enough to be compressed. */
async function manySeries(series: number): Promise<ResourceMetrics> {
  const { provider, collect } = collectingProvider('columns-test');
  const counter = provider.getMeter('m').createCounter('requests');
  for (let i = 0; i < series; i++) counter.add(i, { route: `/r${i}`, pod: `pod-${i % 7}` });
  const rm = await collect();
  await provider.shutdown();
  return rm;
}

describe('MetricColumnBuilders', () => {
  test('the SDK objects and their OTLP/JSON decoded give the same points', async () => {
    const exports = await everyInstrument();
    const sdk = new MetricColumnBuilders();
    const otlp = new MetricColumnBuilders();
    for (const rm of exports) {
      expect(sdk.appendResourceMetrics(rm)).toBe(
        otlp.appendRequest(
          decodeJsonRequest(Buffer.from(`{"resourceMetrics":[${resourceMetricsToJsonBytes(rm)}]}`)),
        ),
      );
    }
    expect(sdk.rows).toBeGreaterThan(10);
    expect(sdk.rows).toBe(otlp.rows);
    expect(dataPointRows(sealedColumnsToRequest(sdk.seal()))).toEqual(
      dataPointRows(sealedColumnsToRequest(otlp.seal())),
    );
  });

  test('bytes counts every array it holds; seal hands them over and starts empty', async () => {
    const b = new MetricColumnBuilders();
    const empty = b.bytes;
    b.appendResourceMetrics(await manySeries(3000));
    const full = b.bytes;
    const sealed = b.seal();
    const arrays = Object.values(sealed).filter((v) => ArrayBuffer.isView(v)) as ArrayBufferView[];
    const held = arrays.reduce((n, a) => n + a.byteLength, 0);
    // The arrays, and beside them the tables' Map entries and the strings as JavaScript holds them.
    expect(full).toBeGreaterThan(held + sealed.strings.byteLength);
    expect(full).toBeLessThan(4 * (held + sealed.strings.byteLength));
    // Every array's buffer is in the transfer list, once: transferring detaches them all.
    expect(new Set(sealed.transfer).size).toBe(sealed.transfer.length);
    structuredClone(sealed, { transfer: sealed.transfer });
    expect(arrays.every((a) => a.byteLength === 0)).toBe(true);
    expect([b.rows, b.bytes]).toEqual([0, empty]);
  });

  test('an attributes object changed after it was appended is taken as it is now', async () => {
    const [rm] = await everyInstrument(1);
    const b = new MetricColumnBuilders();
    b.appendResourceMetrics(rm as ResourceMetrics);
    const point = (rm as ResourceMetrics).scopeMetrics[0]?.metrics[0]?.dataPoints[0];
    (point?.attributes as Record<string, unknown>).route = '/changed';
    b.appendResourceMetrics(rm as ResourceMetrics);
    const routes = dataPointRows(sealedColumnsToRequest(b.seal())).map((r) => r.attributes.route);
    expect(routes).toContain('/a');
    expect(routes).toContain('/changed');
  });

  test('ids cached in one batch are not reused in the next', async () => {
    const [rm] = await everyInstrument(1);
    const b = new MetricColumnBuilders();
    b.appendResourceMetrics(rm as ResourceMetrics);
    const first = dataPointRows(sealedColumnsToRequest(b.seal()));
    b.appendResourceMetrics(rm as ResourceMetrics);
    expect(dataPointRows(sealedColumnsToRequest(b.seal()))).toEqual(first);
  });

  test('an append that throws appends nothing', async () => {
    const b = new MetricColumnBuilders();
    const [rm] = await everyInstrument(1);
    b.appendResourceMetrics(rm as ResourceMetrics);
    const rows = b.rows;
    const cyclic: unknown[] = [];
    cyclic.push(cyclic);
    const point = (rm as ResourceMetrics).scopeMetrics[0]?.metrics[0]?.dataPoints.at(-1);
    (point?.attributes as Record<string, unknown>).cyclic = cyclic;
    expect(() => b.appendResourceMetrics(rm as ResourceMetrics)).toThrow(RangeError);
    expect(b.rows).toBe(rows);
    expect(dataPointRows(sealedColumnsToRequest(b.seal()))).toHaveLength(rows);
  });
});

describe('encodeParquet', () => {
  test('the file reads back as sealedColumnsToRequest gives the columns', async () => {
    for (const compression of ['zstd', 'gzip', 'none'] as const) {
      const b = new MetricColumnBuilders();
      for (const rm of await everyInstrument()) b.appendResourceMetrics(rm);
      b.appendResourceMetrics(await manySeries(500));
      const sealed = b.seal();
      const expected = dataPointRows(sealedColumnsToRequest(sealed));
      const file = await encodeParquet(sealed, {
        compression,
        compressPage: pages(compression),
      });
      const { request, rows } = await parquetToRequest(file, decompression);
      expect(rows).toBe(expected.length);
      const key = (r: (typeof expected)[number]) => JSON.stringify(r);
      expect(dataPointRows(request).map(key).sort()).toEqual(expected.map(key).sort());
    }
  });

  test("an integer point's Value is the integer's: -0 is written +0, as OTLP's asInt (and compaction) have it", async () => {
    const { provider, collect } = collectingProvider('zero');
    const meter = provider.getMeter('m');
    meter.createGauge('int.gauge', { valueType: ValueType.INT }).record(-0);
    meter.createGauge('double.gauge', { valueType: ValueType.DOUBLE }).record(-0);
    const rm = await collect();
    await provider.shutdown();
    const b = new MetricColumnBuilders();
    b.appendResourceMetrics(rm);
    const file = new Uint8Array(await encodeParquet(b.seal(), { compression: 'none' }));
    const rows = await parquetReadObjects({ file: file.buffer, columns: ['MetricName', 'Value'] });
    const value = (name: string) => rows.find((r) => r.MetricName === name)?.Value as number;
    // Before: -0 for the integer gauge, which its compaction (from ValueAsInt) wrote +0.
    expect(Object.is(value('int.gauge'), 0)).toBe(true);
    // A double keeps its sign (docs/parquet.md: -0 itself is kept in the values).
    expect(Object.is(value('double.gauge'), -0)).toBe(true);
  });

  test('footer: schema version and extra metadata, created_by; every chunk carries the codec', async () => {
    const b = new MetricColumnBuilders();
    b.appendResourceMetrics(await manySeries(3000));
    const file = await encodeParquet(b.seal(), {
      compression: 'zstd',
      compressPage: pages('zstd'),
      keyValueMetadata: [{ key: 'otel_s3.inputs', value: 'a,b' }],
    });
    const metadata = parquetMetadata(new Uint8Array(file).buffer);
    expect(metadata.key_value_metadata).toEqual([
      { key: SCHEMA_VERSION_KEY, value: SCHEMA_VERSION },
      { key: 'otel_s3.inputs', value: 'a,b' },
    ]);
    expect(metadata.created_by).toBe(CREATED_BY);
    const chunks = metadata.row_groups.flatMap((g) => g.columns);
    expect(new Set(chunks.map((c) => c.meta_data?.codec))).toEqual(new Set(['ZSTD']));
  });

  test('a dictionary page says it is sorted only when its values are in order', async () => {
    // Bounds seen 10, 20 before 1, 2: the bounds' dictionary keeps them in that order.
    const { provider, collect } = collectingProvider('sorted-dictionaries');
    const meter = provider.getMeter('m');
    meter.createHistogram('a', { advice: { explicitBucketBoundaries: [10, 20] } }).record(15);
    meter.createHistogram('b', { advice: { explicitBucketBoundaries: [1, 2] } }).record(1.5);
    const b = new MetricColumnBuilders();
    b.appendResourceMetrics(await collect());
    await provider.shutdown();
    const file = new Uint8Array(await encodeParquet(b.seal(), { compression: 'none' }));
    const metadata = parquetMetadata(file.buffer);
    const marked: string[] = [];
    for (const column of metadata.row_groups.flatMap((g) => g.columns)) {
      const meta = column.meta_data;
      if (meta?.dictionary_page_offset === undefined) continue;
      const reader = {
        view: new DataView(file.buffer),
        offset: Number(meta.dictionary_page_offset),
      };
      const header = parquetHeader(reader);
      const dictionary = header.dictionary_page_header;
      if (dictionary?.is_sorted !== true) continue;
      marked.push(meta.path_in_schema.join('.'));
      const values = Array.from(readPlain(reader, meta.type, dictionary.num_values, undefined));
      const key = (v: unknown) =>
        v instanceof Uint8Array ? Buffer.from(v).toString('hex') : (v as number | bigint);
      for (let i = 1; i < values.length; i++) {
        const [x, y] = [values[i - 1], values[i]];
        const inOrder =
          x instanceof Uint8Array
            ? Buffer.compare(Buffer.from(x), Buffer.from(y as Uint8Array)) <= 0
            : (key(x) as number) <= (key(y) as number);
        expect(inOrder, `${meta.path_in_schema.join('.')} entry ${i}`).toBe(true);
      }
    }
    expect(marked.length).toBeGreaterThan(0); // the string dictionaries are sorted
  });

  test('an empty batch is a file of no rows', async () => {
    const file = await encodeParquet(new MetricColumnBuilders().seal(), { compression: 'none' });
    expect(Number(parquetMetadata(new Uint8Array(file).buffer).num_rows)).toBe(0);
    expect(await parquetReadObjects({ file: new Uint8Array(file).buffer })).toEqual([]);
  });

  test('bad options are refused, naming the option and what is allowed', async () => {
    const sealed = () => new MetricColumnBuilders().seal();
    await expect(encodeParquet(sealed(), { compression: 'lz4' as 'none' })).rejects.toThrow(
      /compression must be 'zstd', 'gzip' or 'none', not lz4/,
    );
    await expect(encodeParquet(sealed(), { compression: 'zstd' })).rejects.toThrow(
      /needs compressPage/,
    );
    await expect(encodeParquet(sealed(), { compression: 'none', rowGroupRows: 0 })).rejects.toThrow(
      /rowGroupRows must be an integer from 1 to 65536/,
    );
    await expect(
      encodeParquet(sealed(), {
        compression: 'none',
        keyValueMetadata: [{ key: SCHEMA_VERSION_KEY, value: '9' }],
      }),
    ).rejects.toThrow(/otel_s3.schema_version is written by the encoder/);
  });
});

describe('ParquetFileWriter', () => {
  const plain = (v: unknown) => JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? `${x}n` : x));
  const fileRows = async (file: Uint8Array) =>
    (
      await parquetReadObjects({
        file: new Uint8Array(file).buffer,
        compressors: { ZSTD: (input: Uint8Array) => new Uint8Array(zstdDecompress(input)) },
      })
    ).map(plain);

  test('a file of several runs: each run sorted into row groups of its own, the footer last', async () => {
    const runs = [await manySeries(250), ...(await everyInstrument()), await manySeries(40)].map(
      (rm) => {
        const b = new MetricColumnBuilders();
        b.appendResourceMetrics(rm);
        return b.seal();
      },
    );
    const writer = new ParquetFileWriter({
      compression: 'zstd',
      compressPage: pages('zstd'),
      rowGroupRows: 100,
    });
    for (const run of runs) await writer.writeRun(run);
    const rows = runs.map((run) => run.rows);
    const total = rows.reduce((a, b) => a + b, 0);
    expect(writer.rows).toBe(total);
    const file = writer.finish([{ key: 'otel_s3.inputs', value: 'a,b' }]);
    const metadata = parquetMetadata(new Uint8Array(file).buffer);
    expect(Number(metadata.num_rows)).toBe(total);
    // Row groups never span two runs.
    const groups = rows.flatMap((n) =>
      Array.from({ length: Math.ceil(n / 100) }, (_, i) => Math.min(100, n - 100 * i)),
    );
    expect(metadata.row_groups.map((g) => Number(g.num_rows))).toEqual(groups);
    expect(metadata.key_value_metadata).toEqual([
      { key: SCHEMA_VERSION_KEY, value: SCHEMA_VERSION },
      { key: 'otel_s3.inputs', value: 'a,b' },
    ]);
    // Each run's rows in the order a file of that run alone has them, one run after another.
    const alone: string[] = [];
    for (const run of runs) {
      alone.push(...(await fileRows(await encodeParquet(run, { compression: 'none' }))));
    }
    expect(await fileRows(file)).toEqual(alone);
  });

  test('rows in order: ServiceName, MetricName, then resource, metric and attribute set as they came, then time', async () => {
    // Three resources (two of one service, the services out of name order), two metrics each
    // (out of name order), two attribute sets, times out of order within a series.
    const str = (key: string, value: string) => ({ key, value: { stringValue: value } });
    const resources = [
      ['zeta', 'pod-a'],
      ['alpha', 'pod-b'],
      ['zeta', 'pod-c'],
    ];
    const metrics = ['m.b', 'm.a'];
    const routes = ['/y', '/x'];
    const times = [3_000, 1_000, 2_000];
    const points: { service: string; pod: string; name: string; route: string; time: number }[] =
      [];
    const request = {
      resourceMetrics: resources.map(([service = '', pod = '']) => ({
        resource: { attributes: [str('service.name', service), str('k8s.pod.name', pod)] },
        scopeMetrics: [
          {
            scope: { name: 'order' },
            metrics: metrics.map((name) => ({
              name,
              sum: {
                aggregationTemporality: 2,
                isMonotonic: true,
                dataPoints: times.flatMap((time) =>
                  routes.map((route) => {
                    points.push({ service, pod, name, route, time });
                    return {
                      startTimeUnixNano: '0',
                      timeUnixNano: String(time * 1e6),
                      asInt: '1',
                      attributes: [str('route', route)],
                    };
                  }),
                ),
              },
            })),
          },
        ],
      })),
    };
    const b = new MetricColumnBuilders();
    b.appendRequest(request as unknown as Parameters<MetricColumnBuilders['appendRequest']>[0]);
    const file = await encodeParquet(b.seal(), { compression: 'none' });
    const read = await parquetReadObjects({ file: new Uint8Array(file).buffer });
    const got = read.map((r) => {
      const pod = (r.ResourceAttributes as Record<string, string>)['k8s.pod.name'];
      const route = (r.Attributes as Record<string, string>).route;
      // TimeUnix reads as a Date: milliseconds.
      return `${r.ServiceName} ${pod} ${r.MetricName} ${route} ${Number(r.TimeUnix)}`;
    });
    // The order by hand: ids are given in the order resources, metrics and sets first come.
    const first =
      <T>(list: T[]) =>
      (x: T) =>
        list.indexOf(x);
    const resourceRank = first(resources.map(([, pod]) => pod));
    const metricRank = first(metrics);
    const routeRank = first(routes);
    const expected = [...points]
      .sort(
        (a, c) =>
          a.service.localeCompare(c.service) ||
          a.name.localeCompare(c.name) ||
          resourceRank(a.pod) - resourceRank(c.pod) ||
          metricRank(a.name) - metricRank(c.name) ||
          routeRank(a.route) - routeRank(c.route) ||
          a.time - c.time,
      )
      .map((p) => `${p.service} ${p.pod} ${p.name} ${p.route} ${p.time}`);
    expect(got).toEqual(expected);
  });

  test('series out of time order are sorted across the writer steps (more rows than one step)', async () => {
    // 1,500 series of three points each, times 3, 1, 2: 4,500 rows, so runs of one series
    // straddle the steps of 2,048 rows the row order is worked out in.
    const series = 1_500;
    const times = [3_000, 1_000, 2_000];
    const dataPoints = [];
    for (let k = 0; k < series; k++) {
      for (const time of times) {
        dataPoints.push({
          startTimeUnixNano: '0',
          timeUnixNano: String(time * 1e6),
          asInt: String(k),
          attributes: [{ key: 'k', value: { intValue: String(k) } }],
        });
      }
    }
    const request = {
      resourceMetrics: [
        {
          resource: { attributes: [] },
          scopeMetrics: [
            {
              scope: { name: 'steps' },
              metrics: [{ name: 'm', sum: { aggregationTemporality: 2, dataPoints } }],
            },
          ],
        },
      ],
    };
    const b = new MetricColumnBuilders();
    b.appendRequest(request as unknown as Parameters<MetricColumnBuilders['appendRequest']>[0]);
    const file = await encodeParquet(b.seal(), { compression: 'none' });
    const read = await parquetReadObjects({ file: new Uint8Array(file).buffer });
    const got = read.map((r) => `${r.ValueAsInt} ${Number(r.TimeUnix)}`);
    // Sets come in order of k; within one, time order.
    const expected = [];
    for (let k = 0; k < series; k++) {
      for (const time of [...times].sort((x, y) => x - y)) expected.push(`${k} ${time}`);
    }
    expect(got).toEqual(expected);
  });

  test('a finished file takes no more runs and no second footer', async () => {
    const writer = new ParquetFileWriter({ compression: 'none' });
    const b = new MetricColumnBuilders();
    b.appendResourceMetrics(await manySeries(3));
    writer.finish();
    await expect(writer.writeRun(b.seal())).rejects.toThrow(/finished/);
    expect(() => writer.finish()).toThrow(/finished/);
  });
});

describe('page compression', () => {
  test('createPageCompressor: one frame per page, each page its own, with overlapping calls', async () => {
    for (const [compression, decompress] of [
      ['zstd', (b: Uint8Array) => zstdDecompress(b)],
      ['gzip', (b: Uint8Array) => gunzipSync(b)],
    ] as const) {
      const compress = pages(compression);
      const input = [1000, 5000, 70_000].map((n, i) => Buffer.alloc(n, `page ${i};`));
      const out = await Promise.all(input.map((p) => compress(p)));
      out.forEach((o, i) => {
        expect(o.length).toBeLessThan((input[i] as Buffer).length); // compressed
        expect(Buffer.from(decompress(o)).equals(input[i] as Buffer), `${compression} ${i}`).toBe(
          true,
        );
      });
    }
    expect(() => createPageCompressor({ compression: 'zstd', level: 3 })).toThrow(/engine/);
  });

  test('a page under STORE_BELOW bytes is stored in a zstd frame or gzip member that decoders read', () => {
    for (const [codec, decompress] of [
      [6, (b: Uint8Array) => zstdDecompress(b)],
      [2, (b: Uint8Array) => gunzipSync(b)],
    ] as const) {
      for (const n of [0, 1, 255, 256, 300, STORE_BELOW - 1]) {
        const page = Buffer.from(Array.from({ length: n }, (_, i) => (i * 31) & 0xff));
        const frame = storedPage(codec, page);
        expect(frame.length).toBeLessThan(n + 24); // stored: its header and trailer only
        expect(Buffer.from(decompress(frame)).equals(page), `codec ${codec}, ${n} bytes`).toBe(
          true,
        );
      }
    }
  });
  test('a leading U+FEFF of a name or an attribute is kept when columns become a request again', async () => {
    const { provider, collect } = collectingProvider('\uFEFFbom-service');
    provider.getMeter('m').createCounter('\uFEFFrequests').add(1, { '\uFEFFk': '\uFEFFv' });
    const rm = await collect();
    await provider.shutdown();
    const b = new MetricColumnBuilders();
    b.appendResourceMetrics(rm);
    // Before: a default TextDecoder took each leading U+FEFF away.
    const text = JSON.stringify(sealedColumnsToRequest(b.seal()));
    for (const s of ['\uFEFFbom-service', '\uFEFFrequests', '\uFEFFk', '\uFEFFv'])
      expect(text).toContain(s);
  });
});
