import type { OtlpObject, OtlpValue } from '../encoding/otlp-proto-decode.js';
import { checkDropped } from '../encoding/otlp-schema.js';
import type { ExportTally } from '../encoding/records.js';
import { jsValueText, otlpKeyTexts } from '../parquet/attribute-text.js';
import { textOf } from '../parquet/tables.js';
import { type FlatStore, INT64_MAX, TimeOutOfRangeError } from './flat-parquet/store.js';
import {
  groupByResourceAndScope,
  type ResourceLike,
  type Scoped,
  type ScopeLike,
} from './otlp-groups.js';
import { list, nanosText, obj } from './plain-values.js';

/** What the rows of one resource's scope share, for a flat table's appender. */
export interface FlatScope {
  readonly resource: ResourceLike;
  readonly scope: ScopeLike;
  /** The resource's attribute set (FlatStore.setOf). */
  readonly resourceSet: number;
  /** The resource's `service.name` as text ('' without one). */
  readonly service: string;
}

/**
 * Items as rows of a flat table's store, grouped by resource and scope (groupByResourceAndScope).
 * `scopeRows` is called once a scope, and the writer it returns once an item, after the item is
 * counted into `tally` and its row added: with that row.
 */
export function appendScopedRows<T extends Scoped>(
  store: FlatStore,
  items: readonly T[],
  tally: ExportTally,
  count: (tally: ExportTally, item: T) => void,
  scopeRows: (group: FlatScope) => (item: T, row: number) => void,
): void {
  for (const { resource, scopes } of groupByResourceAndScope(items)) {
    const resourceSet = store.setOf(resource.attributes);
    const service = jsValueText(resource.attributes['service.name']) ?? '';
    for (const { scope, items: scoped } of scopes) {
      // Not kept in the table, but refused as the OTLP formats refuse it.
      checkDropped('a dropped attributes count', scope.droppedAttributesCount);
      const write = scopeRows({ resource, scope, resourceSet, service });
      for (const item of scoped) {
        count(tally, item);
        write(item, store.addRow());
      }
    }
  }
}

/** What the rows of one scope of a decoded OTLP request share, for a flat table's appender. */
export interface OtlpFlatScope {
  /** The Resource* object (`resourceSpans[i]`): its `schemaUrl`. */
  readonly resource: OtlpObject;
  /** The Scope* object (`scopeSpans[j]`): its `scope` and `schemaUrl`. */
  readonly scoped: OtlpObject;
  readonly scope: OtlpObject;
  /** The resource's attribute set (FlatStore.newSet), made once a resource. */
  readonly resourceSet: number;
  /** The resource's `service.name` as text ('' without one). */
  readonly service: string;
}

/**
 * The items of a decoded OTLP request (`resources`: its `resourceSpans` or `resourceLogs`) as
 * rows of a flat table's store, for compaction: `scopeRows` is called once a scope, and the
 * writer it returns once an item, with its row. Anything that is not what the field holds reads
 * as empty (a request from outside may hold anything). Returns the rows added.
 */
function appendOtlpRows(
  store: FlatStore,
  resources: OtlpValue | undefined,
  fields: { scopes: string; items: string },
  scopeRows: (group: OtlpFlatScope) => (item: OtlpObject, row: number) => void,
): number {
  let rows = 0;
  for (const r of list(resources)) {
    const resource = obj(r);
    const { keys, texts } = otlpKeyTexts(obj(resource.resource).attributes);
    const resourceSet = store.newSet(keys, texts);
    const service = textOf(keys, texts, 'service.name') ?? '';
    for (const s of list(resource[fields.scopes])) {
      const scoped = obj(s);
      const write = scopeRows({
        resource,
        scoped,
        scope: obj(scoped.scope),
        resourceSet,
        service,
      });
      for (const item of list(scoped[fields.items])) {
        write(obj(item), store.addRow());
        rows++;
      }
    }
  }
  return rows;
}

export { TimeOutOfRangeError };

/**
 * An OTLP time (decimal nanoseconds, or a number) as the bigint a timestamp column holds; 0 if
 * none. Throws TimeOutOfRangeError, naming `field`, for a time past INT64 (never wrapped).
 */
export function otlpNanos(v: OtlpValue | undefined, field: string): bigint {
  const text = nanosText(v);
  if (!/^\d+$/.test(text)) return 0n;
  const nanos = BigInt(text);
  if (nanos > INT64_MAX) throw new TimeOutOfRangeError(field, text);
  return nanos;
}

/** A KeyValue list as a new attribute set of `store` (FlatStore.newSet). */
export function otlpSet(store: FlatStore, attributes: OtlpValue | undefined): number {
  const { keys, texts } = otlpKeyTexts(attributes);
  return store.newSet(keys, texts);
}

/** A signal's rows of decoded OTLP requests (its append-otlp.ts, made by otlpRows()), for compaction. */
export interface OtlpRows {
  /** The items of a request, counted apart from the store. */
  count(request: OtlpObject): number;
  /** Appends every item of a request; returns how many. */
  append(store: FlatStore, request: OtlpObject): number;
}

/** The items of a decoded OTLP request, counted as appendOtlpRows() would walk them. */
function countOtlpItems(
  resources: OtlpValue | undefined,
  fields: { scopes: string; items: string },
): number {
  let items = 0;
  for (const r of list(resources)) {
    for (const s of list(obj(r)[fields.scopes])) items += list(obj(s)[fields.items]).length;
  }
  return items;
}

/**
 * The OtlpRows of a signal whose requests list items under `resources` (`resourceSpans`),
 * `fields.scopes` (`scopeSpans`) and `fields.items` (`spans`): `scopeRows` as appendOtlpRows()
 * takes it, given the store too.
 */
export function otlpRows(
  resources: string,
  fields: { scopes: string; items: string },
  scopeRows: (store: FlatStore, group: OtlpFlatScope) => (item: OtlpObject, row: number) => void,
): OtlpRows {
  return {
    count: (request) => countOtlpItems(request[resources], fields),
    append: (store, request) =>
      appendOtlpRows(store, request[resources], fields, (group) => scopeRows(store, group)),
  };
}
