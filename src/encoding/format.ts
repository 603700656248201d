import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { resourceMetricsToJsonBytes } from './otlp-json.js';
import { resourceMetricsToProto } from './otlp-proto.js';

/** How records join into one object: text around and between them (OTLP/JSON), or nothing (protobuf). */
export interface Framing {
  head: string;
  separator: string;
  tail: string;
}

/**
 * How one export becomes a record and how a batch of records becomes the bytes of one object:
 * one ExportMetricsServiceRequest per object, as OTLP readers (awss3receiver) expect.
 */
export interface RecordFormat {
  encode(rm: ResourceMetrics): Buffer;
  /** Bytes the object adds around `count` records. */
  overhead(count: number): number;
  /** How records join into one object, for the worker that makes object bodies. */
  framing: Framing | null;
  /** One object from its records, on this thread (the fallback when the worker fails). */
  assemble(records: readonly Buffer[], recordBytes: number): Buffer;
}

const JSON_FRAMING: Framing = { head: '{"resourceMetrics":[', separator: ',', tail: ']}\n' };
const JSON_HEAD = Buffer.from(JSON_FRAMING.head);
const JSON_TAIL = Buffer.from(JSON_FRAMING.tail);
const COMMA = 0x2c;

/** `{"resourceMetrics":[rm1,rm2,...]}\n`: one request on one line, a valid JSON-lines file. */
export const otlpJsonRecords: RecordFormat = {
  encode: resourceMetricsToJsonBytes,
  framing: JSON_FRAMING,
  overhead: (count) => JSON_HEAD.length + JSON_TAIL.length + Math.max(0, count - 1),
  assemble(records, recordBytes) {
    const out = Buffer.allocUnsafeSlow(recordBytes + this.overhead(records.length));
    let at = JSON_HEAD.copy(out, 0);
    records.forEach((record, i) => {
      if (i > 0) out[at++] = COMMA;
      at += record.copy(out, at);
    });
    JSON_TAIL.copy(out, at);
    return out;
  },
};

/** Serialized requests concatenate into one valid request: records are joined as they are. */
export const otlpProtoRecords: RecordFormat = {
  encode: resourceMetricsToProto,
  framing: null,
  overhead: () => 0,
  assemble(records, recordBytes) {
    const out = Buffer.allocUnsafeSlow(recordBytes);
    let at = 0;
    for (const record of records) at += record.copy(out, at);
    return out;
  },
};

/** Data points in one ResourceMetrics, for accounting of what was uploaded or dropped. */
export function countDataPoints(rm: ResourceMetrics): number {
  let points = 0;
  for (const sm of rm.scopeMetrics) for (const m of sm.metrics) points += m.dataPoints.length;
  return points;
}

/** The oldest data point end time of an export in ms, or undefined if it has no points. */
export function oldestEndTimeMillis(rm: ResourceMetrics): number | undefined {
  let oldest: number | undefined;
  for (const sm of rm.scopeMetrics) {
    for (const m of sm.metrics) {
      for (const p of m.dataPoints) {
        const t = p.endTime[0] * 1000 + Math.floor(p.endTime[1] / 1e6);
        if (oldest === undefined || t < oldest) oldest = t;
      }
    }
  }
  return oldest;
}
