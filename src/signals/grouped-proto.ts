import { protoAttributes } from '../encoding/any-value-proto.js';
import { AttributeCache } from '../encoding/attribute-cache.js';
import { FIELD } from '../encoding/otlp-schema.js';
import { ProtoWriter } from '../encoding/proto-writer.js';
import {
  groupByResourceAndScope,
  type ResourceLike,
  type Scoped,
  type ScopeLike,
} from './otlp-groups.js';

/**
 * The protobuf of an export of spans or log records: its ResourceSpans (ResourceLogs) messages,
 * each in field 1 of the request, so records concatenate into one request (protoRecords()). The
 * signal writes each item; this writes the resources and scopes around them.
 */

const F = FIELD;

/** Field numbers of one signal's request, ResourceX and ScopeX messages. */
export interface ProtoGroupFields {
  readonly request: number;
  readonly resource: number;
  readonly scopes: number;
  readonly resourceSchemaUrl: number;
  readonly scope: number;
  readonly items: number;
  readonly scopeSchemaUrl: number;
}

export function writeProtoGroups<T extends Scoped>(
  w: ProtoWriter,
  items: readonly T[],
  fields: ProtoGroupFields,
  writeItem: (w: ProtoWriter, item: T) => void,
): void {
  for (const group of groupByResourceAndScope(items)) {
    w.fork(fields.request);
    w.fork(fields.resource);
    resourceAttributes(w, group.resource);
    w.join();
    for (const { scope: sc, items: list } of group.scopes) {
      w.fork(fields.scopes);
      scope(w, fields.scope, sc);
      for (let i = 0; i < list.length; i++) {
        w.fork(fields.items);
        writeItem(w, list[i] as T);
        w.join();
      }
      if (sc.schemaUrl) w.string(fields.scopeSchemaUrl, sc.schemaUrl);
      w.join();
    }
    if (group.resource.schemaUrl) w.string(fields.resourceSchemaUrl, group.resource.schemaUrl);
    w.join();
  }
}

/** A resource's attributes, encoded once per attributes object (see grouped-json.ts). */
const resourceCache = new AttributeCache();
const resourceWriter = new ProtoWriter();

function resourceAttributes(w: ProtoWriter, r: ResourceLike): void {
  const attrs = r.attributes;
  const cached = resourceCache.get(attrs);
  if (cached !== undefined) {
    w.raw(cached);
    return;
  }
  const rw = resourceWriter;
  rw.reset();
  protoAttributes(rw, F.Resource.attributes, attrs);
  const bytes = rw.snapshot();
  resourceCache.set(attrs, Object.keys(attrs), bytes);
  w.raw(bytes);
}

function scope(w: ProtoWriter, field: number, s: ScopeLike): void {
  const S = F.InstrumentationScope;
  w.fork(field);
  w.string(S.name, s.name ?? '', true);
  if (s.version) w.string(S.version, s.version);
  protoAttributes(w, S.attributes, s.attributes);
  if (s.droppedAttributesCount) w.uint(S.droppedAttributesCount, s.droppedAttributesCount);
  w.join();
}
