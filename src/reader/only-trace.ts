import { InvalidOptionError } from '../base/invalid-option.js';
import type { OtlpObject } from '../encoding/otlp-proto-decode.js';
import type { SignalName } from '../layout/formats.js';

/** Each signal's request fields, outer to inner (a metrics request has no trace to keep). */
const LEVELS: Readonly<Record<'traces' | 'logs', readonly [string, string, string]>> = {
  traces: ['resourceSpans', 'scopeSpans', 'spans'],
  logs: ['resourceLogs', 'scopeLogs', 'logRecords'],
};

/**
 * The reading functions' `traceId` option: 32 hex digits, not all zero (W3C Trace Context's
 * invalid id), as lower case; undefined when not given. InvalidOptionError otherwise.
 */
export function resolveTraceId(traceId: unknown): string | undefined {
  if (traceId === undefined) return undefined;
  if (typeof traceId !== 'string' || !/^[0-9a-fA-F]{32}$/.test(traceId) || /^0+$/.test(traceId)) {
    throw new InvalidOptionError(
      'traceId',
      traceId,
      '32 hex digits, not all zero (e.g. 4bf92f3577b34da6a3ce929d0e0e4736)',
    );
  }
  return traceId.toLowerCase();
}

/**
 * The request with only the spans or log records of trace `traceId` (lower-case hex; a stored
 * id of either case matches), and only the scopes and resources that still hold some. A
 * metrics request is returned as it is.
 */
export function onlyTrace(request: OtlpObject, signal: SignalName, traceId: string): OtlpObject {
  if (signal === 'metrics') return request;
  const [resources, scopes, items] = LEVELS[signal];
  const kept = list(request[resources]).flatMap((resource) => {
    const inner = list(resource[scopes]).flatMap((scope) => {
      const of = list(scope[items]).filter(
        (item) => typeof item.traceId === 'string' && item.traceId.toLowerCase() === traceId,
      );
      return of.length === 0 ? [] : [{ ...scope, [items]: of }];
    });
    return inner.length === 0 ? [] : [{ ...resource, [scopes]: inner }];
  });
  return { ...request, [resources]: kept };
}

const list = (value: unknown): OtlpObject[] =>
  Array.isArray(value) ? (value as OtlpObject[]) : [];
