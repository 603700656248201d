import { once } from 'node:events';
import zlib from 'node:zlib';
import { zstdCompressStream } from './zstd.js';

/**
 * A zstd stream that decompresses to `bytes` zeros: frames of up to 1 GiB of zeros, streamed
 * through a streaming compressor (never held in memory), repeated. Zeros become RLE blocks, so
 * 10 GiB take about 320 KB whatever the level; the level is the default so making one is fast.
 */
export async function zstdBomb(bytes: number): Promise<Buffer> {
  const frameBytes = Math.min(bytes, 2 ** 30);
  if (bytes % frameBytes !== 0) throw new Error('zstdBomb: bytes must be a multiple of its frame');
  const frame = await compressZeros(zstdCompressStream(), frameBytes);
  return Buffer.concat(Array.from({ length: bytes / frameBytes }, () => frame));
}

/** A gzip member that decompresses to `bytes` zeros (about 1 KB per MiB). */
export function gzipBomb(bytes: number): Promise<Buffer> {
  return compressZeros(zlib.createGzip({ level: 9 }), bytes);
}

async function compressZeros(compressor: NodeJS.ReadWriteStream, bytes: number) {
  const zeros = Buffer.alloc(Math.min(bytes, 16 * 1024 * 1024));
  const out: Buffer[] = [];
  compressor.on('data', (chunk: Buffer) => out.push(chunk));
  const ended = once(compressor, 'end');
  for (let left = bytes; left > 0; left -= zeros.length) {
    if (!compressor.write(zeros.subarray(0, Math.min(left, zeros.length)))) {
      await once(compressor, 'drain');
    }
  }
  compressor.end();
  await ended;
  return Buffer.concat(out);
}

/** A resource attribute `deep` whose value is an array in an array ... `depth` times. */
export function nestedJsonObject(depth: number): Buffer {
  const open = '{"arrayValue":{"values":['.repeat(depth);
  const close = ']}}'.repeat(depth);
  const value = `${open}{"stringValue":"x"}${close}`;
  return Buffer.from(
    `{"resourceMetrics":[{"resource":{"attributes":[{"key":"deep","value":${value}}]},"scopeMetrics":[]}]}\n`,
  );
}

/**
 * The same request in protobuf: ExportMetricsServiceRequest.resourceMetrics(1) > Resource(1) >
 * attributes(1) KeyValue { key(1) "deep", value(2) AnyValue } with AnyValue.arrayValue(5) >
 * ArrayValue.values(1) > AnyValue ... `depth` times. Written back to front, so each length is
 * known when its field is written.
 */
export function nestedProtoObject(depth: number): Buffer {
  const out = Buffer.alloc(depth * 12 + 64);
  let start = out.length;
  const prepend = (...bytes: number[]) => {
    start -= bytes.length;
    out.set(bytes, start);
  };
  const wrap = (tag: number) => {
    let length = out.length - start;
    const varint: number[] = [];
    do {
      varint.push((length & 0x7f) | (length > 0x7f ? 0x80 : 0));
      length >>>= 7;
    } while (length > 0);
    prepend(tag, ...varint);
  };
  prepend(0x0a, 0x01, 0x78); // AnyValue { stringValue: "x" }
  for (let i = 0; i < depth; i++) {
    wrap(0x0a); // ArrayValue.values
    wrap(0x2a); // AnyValue.arrayValue
  }
  wrap(0x12); // KeyValue.value
  prepend(0x0a, 0x04, ...Buffer.from('deep')); // KeyValue.key
  wrap(0x0a); // Resource.attributes
  wrap(0x0a); // ResourceMetrics.resource
  wrap(0x0a); // ExportMetricsServiceRequest.resourceMetrics
  return Buffer.from(out.subarray(start));
}

/** An OTLP/JSON object (one line) with `timeUnixNano` of its first gauge point set to `nanos`. */
export function withGaugeTime(json: Buffer, nanos: string): Buffer {
  const request = JSON.parse(json.toString()) as {
    resourceMetrics: { scopeMetrics: { metrics: { gauge?: { dataPoints: object[] } }[] }[] }[];
  };
  const metrics = request.resourceMetrics.flatMap((rm) =>
    rm.scopeMetrics.flatMap((s) => s.metrics),
  );
  const gauge = metrics.find((m) => m.gauge !== undefined)?.gauge;
  if (gauge === undefined) throw new Error('withGaugeTime: no gauge');
  gauge.dataPoints[0] = { ...gauge.dataPoints[0], timeUnixNano: nanos };
  return Buffer.from(`${JSON.stringify(request)}\n`);
}

/** Text a terminal would obey: clear screen, set the title, CSI as one C1 character, bidi override. */
export const EVIL = {
  metric: 'evil\u001b[2Jname\u202e',
  key: 'k\u001b]0;pwned\u0007',
  value: 'v\nnext\u009b31m',
} as const;

/**
 * An OTLP/JSON object (one line) of recordEveryInstrument() whose counter (http.requests, two
 * points) is renamed EVIL.metric, its points carrying the attribute EVIL.key = EVIL.value.
 */
export function withEvilText(json: Buffer): Buffer {
  type Point = { attributes?: object[] };
  type Metric = { name: string } & Record<string, { dataPoints?: Point[] } | string>;
  const request = JSON.parse(json.toString()) as {
    resourceMetrics: { scopeMetrics: { metrics: Metric[] }[] }[];
  };
  const metrics = request.resourceMetrics.flatMap((rm) =>
    rm.scopeMetrics.flatMap((s) => s.metrics),
  );
  const metric = metrics.find((m) => m.name === 'http.requests');
  if (metric === undefined) throw new Error('withEvilText: no http.requests');
  metric.name = EVIL.metric;
  for (const data of Object.values(metric)) {
    if (typeof data === 'string') continue;
    for (const point of data.dataPoints ?? []) {
      point.attributes = [{ key: EVIL.key, value: { stringValue: EVIL.value } }];
    }
  }
  return Buffer.from(`${JSON.stringify(request)}\n`);
}
