import type { PlainValue } from './plain-values.js';

/**
 * The columns a flattened item (span, log record) takes from its resource and scope, with its own
 * attributes: part of the rows `otel-s3 spans` and `otel-s3 logs` print.
 */
export interface ScopedItemRow {
  /** The resource's `service.name` ('' without one). */
  service: string;
  resource: Record<string, PlainValue>;
  /** The instrumentation scope's name (the tracer's, the logger's). */
  scope: string;
  attributes: Record<string, PlainValue>;
}
