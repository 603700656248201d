import { jsonAttributesField } from '../encoding/any-value-json.js';
import { AttributeCache } from '../encoding/attribute-cache.js';
import { JsonWriter } from '../encoding/json-writer.js';
import {
  groupByResourceAndScope,
  type ResourceLike,
  type Scoped,
  type ScopeLike,
} from './otlp-groups.js';

/**
 * The OTLP/JSON of an export of spans or log records: its ResourceSpans (ResourceLogs) objects,
 * comma-separated, so that records join as elements of the request's list (jsonRecords()). The
 * signal writes each item; this writes the resources and scopes around them.
 */

const COMMA = 0x2c;

/** The list fields of one signal, as `,"name":[`. */
export interface JsonGroupFields {
  /** e.g. `,"scopeSpans":[` */
  readonly scopes: string;
  /** e.g. `,"spans":[` */
  readonly items: string;
}

export function writeJsonGroups<T extends Scoped>(
  w: JsonWriter,
  items: readonly T[],
  fields: JsonGroupFields,
  writeItem: (w: JsonWriter, item: T) => void,
): void {
  const groups = groupByResourceAndScope(items);
  for (let g = 0; g < groups.length; g++) {
    const group = groups[g] as (typeof groups)[number];
    if (g > 0) w.char(COMMA);
    w.raw('{"resource":');
    resource(w, group.resource);
    w.raw(fields.scopes);
    for (let s = 0; s < group.scopes.length; s++) {
      const { scope: sc, items: list } = group.scopes[s] as (typeof group.scopes)[number];
      if (s > 0) w.char(COMMA);
      w.raw('{"scope":');
      scope(w, sc);
      w.raw(fields.items);
      for (let i = 0; i < list.length; i++) {
        if (i > 0) w.char(COMMA);
        writeItem(w, list[i] as T);
      }
      w.char(0x5d);
      schemaUrl(w, sc.schemaUrl);
      w.char(0x7d);
    }
    w.char(0x5d);
    schemaUrl(w, group.resource.schemaUrl);
    w.char(0x7d);
  }
}

function schemaUrl(w: JsonWriter, url: string | undefined): void {
  if (!url) return;
  w.raw(',"schemaUrl":');
  w.string(url);
}

/** A resource's spelling, per attributes object (the SDK's Resource memoizes its attributes). */
const resourceCache = new AttributeCache();
const resourceWriter = new JsonWriter();

function resource(w: JsonWriter, r: ResourceLike): void {
  const attrs = r.attributes;
  const cached = resourceCache.get(attrs);
  if (cached !== undefined) {
    w.bytes(cached);
    return;
  }
  const rw = resourceWriter;
  rw.reset();
  rw.char(0x7b);
  jsonAttributesField(rw, '"attributes":', attrs);
  rw.char(0x7d);
  const json = rw.snapshot();
  resourceCache.set(attrs, Object.keys(attrs), json);
  w.bytes(json);
}

function scope(w: JsonWriter, s: ScopeLike): void {
  w.raw('{"name":');
  w.string(s.name ?? '');
  if (s.version) {
    w.raw(',"version":');
    w.string(s.version);
  }
  jsonAttributesField(w, ',"attributes":', s.attributes);
  if (s.droppedAttributesCount) {
    w.raw(',"droppedAttributesCount":');
    w.int(s.droppedAttributesCount);
  }
  w.char(0x7d);
}
