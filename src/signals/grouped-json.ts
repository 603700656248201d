import { jsonAttributesField, jsonAttributesOf } from '../encoding/any-value-json.js';
import { SpellingCache } from '../encoding/attribute-cache.js';
import { JsonWriter, SMALL_WRITER_CAPACITY, spelling } from '../encoding/json-writer.js';
import { REQUEST } from '../encoding/otlp-schema.js';
import type { ExportTally } from '../encoding/records.js';
import {
  groupByResourceAndScope,
  type ItemEncoding,
  type Scoped,
  type ScopeLike,
} from './otlp-groups.js';

const OPEN_RESOURCE = spelling('{"resource":');
const OPEN_SCOPE = spelling('{"scope":');
const SCHEMA_URL = spelling(',"schemaUrl":');
const OPEN_NAME = spelling('{"name":');
const VERSION = spelling(',"version":');
const ATTRIBUTES = spelling('"attributes":[');

/**
 * The OTLP/JSON encoder of a signal whose exports are lists of items, each with its resource and
 * scope (spans, log records): its Resource* objects, comma-separated, so that records join as
 * elements of the request's list (jsonRecords()). Written straight as UTF-8 bytes (no object
 * tree, no JSON.stringify), in the spellings of the OTLP/JSON rules: ids in lower-case hex, times
 * as decimal strings, enums as integers, values as in any-value-json.ts; fields at their default
 * (0, empty) are left out where protobuf leaves them out. The signal writes each item; this writes
 * the resources and scopes around them. An empty export writes nothing.
 */
export function groupedJson<T extends Scoped>(
  signal: keyof typeof REQUEST,
  items: ItemEncoding<T, JsonWriter>,
): (list: readonly T[], tally?: ExportTally) => Buffer {
  const { count, write } = items;
  const scopesField = `,"${REQUEST[signal].scopesField}":[`;
  const itemsField = `,"${REQUEST[signal].itemsField}":[`;
  const w = new JsonWriter();
  return (list, tally) => {
    w.reset(); // what an export that threw half-way left behind
    const groups = groupByResourceAndScope(list);
    for (let g = 0; g < groups.length; g++) {
      const group = groups[g] as (typeof groups)[number];
      if (g > 0) w.char(COMMA);
      w.spell(OPEN_RESOURCE);
      w.bytes(resources.of(group.resource.attributes));
      w.raw(scopesField);
      for (let s = 0; s < group.scopes.length; s++) {
        const { scope, items: scoped } = group.scopes[s] as (typeof group.scopes)[number];
        if (s > 0) w.char(COMMA);
        w.spell(OPEN_SCOPE);
        jsonScope(w, scope);
        w.raw(itemsField);
        for (let i = 0; i < scoped.length; i++) {
          const item = scoped[i] as T;
          if (i > 0) w.char(COMMA);
          if (tally !== undefined) count(tally, item);
          write(w, item);
        }
        w.char(0x5d);
        w.stringUnlessEmpty(SCHEMA_URL, scope.schemaUrl);
        w.char(0x7d);
      }
      w.char(0x5d);
      w.stringUnlessEmpty(SCHEMA_URL, group.resource.schemaUrl);
      w.char(0x7d);
    }
    return w.finish();
  };
}

const COMMA = 0x2c;

/** A resource's spelling, per attributes object (the SDK's Resource memoizes its attributes). */
const resourceWriter = new JsonWriter(SMALL_WRITER_CAPACITY);
const resources = new SpellingCache((attrs) => {
  const rw = resourceWriter;
  rw.reset();
  rw.char(0x7b);
  jsonAttributesField(rw, ATTRIBUTES, attrs);
  rw.char(0x7d);
  return rw.snapshot();
});

/** An InstrumentationScope, for every signal. */
export function jsonScope(w: JsonWriter, s: ScopeLike): void {
  w.spell(OPEN_NAME);
  w.string(s.name ?? '');
  w.stringUnlessEmpty(VERSION, s.version);
  jsonAttributesOf(w, s.attributes, s.droppedAttributesCount);
  w.char(0x7d);
}
