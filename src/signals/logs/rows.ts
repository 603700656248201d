import type { OtlpObject } from '../../encoding/otlp-proto-decode.js';
import {
  anyValue,
  attributes,
  checkAnyValue,
  checkAttributes,
  checkRequestValues,
  enumOf,
  inItem,
  nanosText,
  nanosToIso,
  type PlainValue,
  type RowPlace,
  requestRows,
  str,
} from '../plain-values.js';
import type { ScopedItemRow } from '../scoped-item-row.js';

/**
 * One log record, flattened with its resource and scope: the row of logRecordRows() and of
 * `otel-s3 logs` (each `--format jsonl` line is one, CSV has these columns).
 */
export interface LogRecordRow extends ScopedItemRow {
  /**
   * When the event happened, ISO 8601 UTC with nanoseconds; a record without a timestamp gets
   * its observed time, as the Collector's ClickHouse exporter does; '' when it has neither.
   */
  time: string;
  /** When the SDK (or a collector) saw the record; '' if unset. */
  observedTime: string;
  /** The record's severity text, or the short name of its number (`INFO`, `WARN2`) when it has none. */
  severity: string;
  /**
   * 1-24 (TRACE 1-4, DEBUG 5-8, INFO 9-12, WARN 13-16, ERROR 17-20, FATAL 21-24); 0 if unset.
   * Another writer's number outside them (25, -3, 2.5) as stored; a name of no number
   * (`SEVERITY_NUMBER_LATER`) as stored, as text.
   */
  severityNumber: number | (string & {});
  /** The body as a plain value (text, number, bytes as base64, list, map); null when absent. */
  body: PlainValue;
  /** The span the record was emitted in: 32 and 16 hex digits, '' outside a span. */
  traceId: string;
  spanId: string;
  /** The event's name, for a record that is an event ('' otherwise). */
  eventName: string;
}

const SEVERITY_NAMES = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'FATAL'] as const;
/** OTLP/JSON's names of the SeverityNumber values (`SEVERITY_NUMBER_INFO`: 9). */
export const SEVERITY_NUMBERS: Readonly<Record<string, number>> = Object.fromEntries(
  Array.from({ length: 24 }, (_, i) => [`SEVERITY_NUMBER_${severityName(i + 1)}`, i + 1]),
);

/**
 * The short name of a SeverityNumber, as the logs data model gives it: TRACE for 1, TRACE2 for 2,
 * ... FATAL4 for 24; '' for 0 (unspecified) or a number out of range.
 */
export function severityName(severityNumber: number | (string & {})): string {
  if (
    typeof severityNumber !== 'number' ||
    !Number.isInteger(severityNumber) ||
    severityNumber < 1 ||
    severityNumber > 24
  )
    return '';
  const step = (severityNumber - 1) % 4;
  const name = SEVERITY_NAMES[Math.floor((severityNumber - 1) / 4)] as string;
  return step === 0 ? name : `${name}${step + 1}`;
}

/**
 * A record's severity number; for one without a number, that of its severity text when the text
 * is a short name of the data model, in any case (`WARN`, `Error`, `warning`, `WARN2`: 14), else 0.
 * A number out of 1-24, or a name of none, counts as none.
 * One rule for every reader of severities (`otel-s3 logs --severity`, `otel-s3 stats`).
 */
export function severityNumberOf(row: Pick<LogRecordRow, 'severity' | 'severityNumber'>): number {
  // A number out of 1-24 is none of the data model's: the text decides, as for 0.
  if (typeof row.severityNumber === 'number' && severityName(row.severityNumber) !== '')
    return row.severityNumber;
  const match = /^(trace|debug|info|warn(?:ing)?|error|fatal)([1-4])?$/i.exec(row.severity);
  if (match === null) return 0;
  const name = (match[1] as string).toUpperCase().replace(/ING$/, '');
  return (
    SEVERITY_NAMES.indexOf(name as (typeof SEVERITY_NAMES)[number]) * 4 + Number(match[2] ?? 1)
  );
}

/**
 * Every log record of an ExportLogsServiceRequest (in the OTLP/JSON object shape, whatever the
 * stored format), flattened: the rows `otel-s3 logs` prints, in the request's order.
 */
export function logRecordRows(request: OtlpObject): LogRecordRow[] {
  return requestRows(request.resourceLogs, 'scopeLogs', 'logRecords', (record, place) => {
    try {
      return logRecordRow(record, place);
    } catch (error) {
      throw inItem('log record', error);
    }
  });
}

/**
 * Checks the attribute values and bodies of a decoded OTLP/JSON ExportLogsServiceRequest as
 * logRecordRows() reads them: throws FieldValueError, naming the attribute (or the body) and the
 * value, for an intValue or doubleValue that holds no number.
 */
export function checkLogRecordValues(request: OtlpObject): void {
  checkRequestValues(request.resourceLogs, 'scopeLogs', 'logRecords', (record) => {
    try {
      checkAnyValue(record.body, 'body');
      checkAttributes(record.attributes);
    } catch (error) {
      throw inItem('log record', error);
    }
  });
}

function logRecordRow(record: OtlpObject, { resource, service, scope }: RowPlace): LogRecordRow {
  const observedTime = nanosToIso(nanosText(record.observedTimeUnixNano));
  // A name of no severity number is shown as stored, as a span's kind is: never a made-up 0.
  const severityNumber = enumOf(record.severityNumber, SEVERITY_NUMBERS);
  const severityText = str(record.severityText);
  return {
    time: nanosToIso(nanosText(record.timeUnixNano)) || observedTime,
    observedTime,
    severity:
      severityText !== ''
        ? severityText
        : typeof severityNumber === 'number'
          ? severityName(severityNumber)
          : severityNumber,
    severityNumber,
    body: anyValue(record.body, 'body'),
    traceId: str(record.traceId),
    spanId: str(record.spanId),
    eventName: str(record.eventName),
    service,
    resource,
    scope,
    attributes: attributes(record.attributes),
  };
}
