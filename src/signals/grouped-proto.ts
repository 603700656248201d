import {
  attributeFields,
  protoAttributes,
  protoAttributesOf,
} from '../encoding/any-value-proto.js';
import { SpellingCache } from '../encoding/attribute-cache.js';
import { ENVELOPE, FIELD } from '../encoding/otlp-schema.js';
import { ProtoWriter, SMALL_WRITER_CAPACITY } from '../encoding/proto-writer.js';
import type { ExportTally } from '../encoding/records.js';
import {
  groupByResourceAndScope,
  type ItemEncoding,
  type Scoped,
  type ScopeLike,
} from './otlp-groups.js';

/**
 * The protobuf encoder of a signal whose exports are lists of items, each with its resource and
 * scope (spans, log records): its Resource* messages, each in field 1 of the request, so records
 * concatenate into one request (protoRecords()). Written in one pass, without a sizing pass. The
 * signal writes each item; this writes the resources and scopes around them, with the field
 * numbers every signal's envelope has. An empty export writes nothing.
 */
export function groupedProto<T extends Scoped>(
  items: ItemEncoding<T, ProtoWriter>,
): (list: readonly T[], tally?: ExportTally) => Buffer {
  const { count, write } = items;
  const E = ENVELOPE;
  const w = new ProtoWriter();
  return (list, tally) => {
    w.reset(); // what an export that threw half-way left behind
    for (const group of groupByResourceAndScope(list)) {
      w.fork(E.list);
      w.fork(E.resource);
      w.raw(resources.of(group.resource.attributes));
      w.join();
      for (const { scope, items: scoped } of group.scopes) {
        w.fork(E.scopes);
        protoScope(w, E.scope, scope);
        for (let i = 0; i < scoped.length; i++) {
          const item = scoped[i] as T;
          if (tally !== undefined) count(tally, item);
          w.fork(E.items);
          write(w, item);
          w.join();
        }
        if (scope.schemaUrl) w.string(E.scopeSchemaUrl, scope.schemaUrl);
        w.join();
      }
      if (group.resource.schemaUrl) w.string(E.resourceSchemaUrl, group.resource.schemaUrl);
      w.join();
    }
    return w.finish();
  };
}

const F = FIELD;
const SCOPE_ATTRIBUTES = attributeFields(F.InstrumentationScope);

/** A resource's attributes, encoded once per attributes object (see grouped-json.ts). */
const resourceWriter = new ProtoWriter(SMALL_WRITER_CAPACITY);
const resources = new SpellingCache((attrs) => {
  resourceWriter.reset();
  protoAttributes(resourceWriter, F.Resource.attributes, attrs);
  return resourceWriter.snapshot();
});

function protoScope(w: ProtoWriter, field: number, s: ScopeLike): void {
  const S = F.InstrumentationScope;
  w.fork(field);
  w.string(S.name, s.name ?? '', true);
  if (s.version) w.string(S.version, s.version);
  protoAttributesOf(w, SCOPE_ATTRIBUTES, s.attributes, s.droppedAttributesCount);
  w.join();
}
