import { type ExportTally, noteTime } from '../../encoding/records.js';
import type { AttributeMap, Scoped } from '../otlp-groups.js';

/**
 * A log record as the OTLP encoders read it: the fields of the SDK's ReadableLogRecord, typed
 * structurally so that both SDK lines' records fit (sdk-logs 3.x, whose types come from
 * @opentelemetry/api 1.10, and 0.2xx, whose come from @opentelemetry/api-logs). The SDK's
 * public fields are getters: read them, never spread a record.
 */
export interface LogRecordLike extends Scoped {
  readonly hrTime: HrTimeLike;
  readonly hrTimeObserved: HrTimeLike;
  readonly spanContext?:
    | { readonly traceId: string; readonly spanId: string; readonly traceFlags: number }
    | undefined;
  readonly severityText?: string | undefined;
  /** The API's SeverityNumber (0 unspecified … 24), the same numbers as OTLP's. */
  readonly severityNumber?: number | undefined;
  /** Any value: string, number, boolean, bytes, array, map or null; undefined for none. */
  readonly body?: unknown;
  readonly eventName?: string | undefined;
  readonly attributes: AttributeMap;
  readonly droppedAttributesCount: number;
}

/** The API's HrTime: [seconds, nanoseconds]. */
export type HrTimeLike = readonly [number, number];

/**
 * Counts a log record into the export's tally: one item, at its timestamp, or its observed time
 * when it has none (0), as the Collector's ClickHouse exporter takes a record's time.
 */
export function countLogRecord(tally: ExportTally, record: LogRecordLike): void {
  tally.items++;
  if (!tally.times) return;
  const time = record.hrTime;
  noteTime(tally, time[0] === 0 && time[1] === 0 ? record.hrTimeObserved : time);
}
