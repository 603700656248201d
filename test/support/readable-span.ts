import type { HrTime, SpanContext } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';

/**
 * What handBuiltSpan() needs told: the span's identity, times and where it comes from (a
 * resource and scope may be plain objects), and any other field of a ReadableSpan to set.
 */
export interface SpanFields {
  name: string;
  spanContext: () => SpanContext;
  startTime: HrTime;
  endTime: HrTime;
  resource: object;
  instrumentationScope: object;
  [field: string]: unknown;
}

/**
 * A span as the SDK hands it to an exporter, built by hand (no provider): internal, ended, status
 * unset, no parent, attributes, links or events and nothing dropped, unless `fields` says otherwise.
 */
export function handBuiltSpan(fields: SpanFields): ReadableSpan {
  return {
    kind: 0,
    parentSpanContext: undefined,
    duration: [0, 0],
    ended: true,
    status: { code: 0 },
    attributes: {},
    links: [],
    events: [],
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
    ...fields,
  } as unknown as ReadableSpan;
}
