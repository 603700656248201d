import { REQUEST } from '../../encoding/otlp-schema.js';
import { jsonRecords, protoRecords } from '../../encoding/records.js';
import { splitByResource } from '../otlp-groups.js';
import type { SignalExport } from '../signal.js';
import { spansToJsonBytes } from './otlp-json.js';
import { spansToProto } from './otlp-proto.js';
import type { SpanLike } from './span.js';

const json = jsonRecords(REQUEST.traces.listField, spansToJsonBytes);

/** Spans, as an exporter sees them: one export is the SDK's batch of ReadableSpans (read as SpanLike). */
export const tracesExport: SignalExport<readonly SpanLike[]> = {
  name: 'traces',
  records: {
    'otlp-json': json,
    'otlp-proto': protoRecords(spansToProto),
    // Parquet for spans comes next; until then its fallback's records.
    parquet: json,
  },
  splitByResource,
  resourceAttributes: (spans) => spans[0]?.resource.attributes ?? {},
  async loadColumns() {
    throw new Error('Parquet for spans is not implemented yet');
  },
  async columnsAsRecords() {
    throw new Error('Parquet for spans is not implemented yet');
  },
};
