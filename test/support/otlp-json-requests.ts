import { expect, test } from 'vitest';
import {
  dataPointRows,
  decodeStoredObject,
  logRecordRows,
  ObjectDecodeError,
  type OtlpObject,
  spanRows,
} from '../../src/reader.js';

// Hand-written OTLP/JSON requests of each signal, one item each, for tests of what the reader
// refuses or reads in their values.

const ID = '0190a6c4-8f00-7000-8000-000000000000';
export const METRICS = `p/metrics_${ID}.json`;
export const TRACES = `p/traces_${ID}.json`;
export const LOGS = `p/logs_${ID}.json`;

export type Json = Record<string, unknown>;
export const kv = (key: string, value: Json) => ({ key, value });

/** A metrics request: `m`, a gauge of one point with `attrs`, under `resource` and `scope`. */
export function metrics(attrs: Json[] = [], resource: Json[] = [], scope: Json[] = []): OtlpObject {
  return {
    resourceMetrics: [
      {
        resource: { attributes: resource },
        scopeMetrics: [
          {
            scope: { name: 's', attributes: scope },
            metrics: [{ name: 'm', gauge: { dataPoints: [{ asInt: '1', attributes: attrs }] } }],
          },
        ],
      },
    ],
  } as OtlpObject;
}

/** A traces request: span `op` with `span` fields, under `resource`. */
export function traces(span: Json, resource: Json[] = []): OtlpObject {
  return {
    resourceSpans: [
      {
        resource: { attributes: resource },
        scopeSpans: [{ scope: { name: 's' }, spans: [{ name: 'op', ...span }] }],
      },
    ],
  } as OtlpObject;
}

/** A logs request of one log record with `record` fields. */
export function logs(record: Json, scope: Json[] = []): OtlpObject {
  return {
    resourceLogs: [
      { scopeLogs: [{ scope: { name: 's', attributes: scope }, logRecords: [record] }] },
    ],
  } as OtlpObject;
}

/** The decode error's message for a request at `key`, or 'read' when it decodes. */
export function decodeProblem(key: string, r: OtlpObject): string {
  try {
    decodeStoredObject(key, Buffer.from(JSON.stringify(r)));
    return 'read';
  } catch (error) {
    expect(error).toBeInstanceOf(ObjectDecodeError);
    return (error as Error).message;
  }
}

/**
 * Tests that `values` (attributes as a writer wrote them), put everywhere a request of each
 * signal holds attributes (and in a log body's map), decode and read back as `expected`.
 */
export function readAsWritten(values: Json[], expected: Record<string, unknown>): void {
  test('metrics', () => {
    const r = metrics(values, values, values);
    expect(decodeProblem(METRICS, r)).toBe('read');
    const [row] = dataPointRows(r);
    expect(row?.attributes).toEqual(expected);
    expect(row?.resource).toEqual(expected);
  });

  test('traces', () => {
    const r = traces(
      {
        attributes: values,
        events: [{ name: 'e', attributes: values }],
        links: [{ attributes: values }],
      },
      values,
    );
    expect(decodeProblem(TRACES, r)).toBe('read');
    const [row] = spanRows(r);
    expect(row?.attributes).toEqual(expected);
    expect(row?.events[0]?.attributes).toEqual(expected);
    expect(row?.links[0]?.attributes).toEqual(expected);
    expect(row?.resource).toEqual(expected);
  });

  test('logs', () => {
    const r = logs({ attributes: values, body: { kvlistValue: { values } } }, values);
    expect(decodeProblem(LOGS, r)).toBe('read');
    const [row] = logRecordRows(r);
    expect(row?.attributes).toEqual(expected);
    expect(row?.body).toEqual(expected);
  });
}
