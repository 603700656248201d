import type { AttributeMap } from '../encoding/attribute-cache.js';
import type { ExportTally } from '../encoding/records.js';
import type { PartSink } from './signal.js';

/**
 * What spans and log records share on their way to OTLP: each carries its resource and its
 * instrumentation scope, and a request lists them under one ResourceSpans (ResourceLogs) per
 * resource and one ScopeSpans (ScopeLogs) per scope. The types are structural, the fields the
 * encoders read: the Resource and InstrumentationScope of both SDK lines (2.x and 3.x) fit them.
 */

/** An attribute map, as both API lines type it (1.9: flat values; 1.10: any value). */
export type { AttributeMap } from '../encoding/attribute-cache.js';

export interface ResourceLike {
  readonly attributes: AttributeMap;
  readonly schemaUrl?: string | undefined;
}

/** Core's InstrumentationScope; log records' scopes may carry attributes too. */
export interface ScopeLike {
  readonly name: string;
  readonly version?: string | undefined;
  readonly schemaUrl?: string | undefined;
  readonly attributes?: AttributeMap | undefined;
  readonly droppedAttributesCount?: number | undefined;
}

/** How a signal's items are encoded, in one format: counted into the export's tally, and written. */
export interface ItemEncoding<T, W> {
  count(tally: ExportTally, item: T): void;
  write(w: W, item: T): void;
}

export interface Scoped {
  readonly resource: ResourceLike;
  readonly instrumentationScope: ScopeLike;
}

export interface ScopeGroup<T> {
  readonly scope: ScopeLike;
  readonly items: readonly T[];
}

export interface ResourceGroup<T> {
  readonly resource: ResourceLike;
  readonly scopes: ScopeGroup<T>[];
}

/**
 * Items grouped by resource, then by scope, each group in the order of its first item, as the
 * official protobuf serializers group them: by object identity (the SDK hands every span of one
 * provider the same Resource object, and every span of one tracer the same scope object). Two
 * equal but distinct objects make two groups. An export of one resource and one scope (the
 * usual case) is grouped without a copy.
 */
export function groupByResourceAndScope<T extends Scoped>(items: readonly T[]): ResourceGroup<T>[] {
  const first = items[0];
  if (first === undefined) return [];
  const { resource, instrumentationScope } = first;
  let i = 1;
  while (
    i < items.length &&
    (items[i] as T).resource === resource &&
    (items[i] as T).instrumentationScope === instrumentationScope
  ) {
    i++;
  }
  if (i === items.length) return [{ resource, scopes: [{ scope: instrumentationScope, items }] }];

  const byResource = new Map<ResourceLike, Map<ScopeLike, T[]>>();
  for (const item of items) {
    let byScope = byResource.get(item.resource);
    if (byScope === undefined) {
      byScope = new Map();
      byResource.set(item.resource, byScope);
    }
    const list = byScope.get(item.instrumentationScope);
    if (list === undefined) byScope.set(item.instrumentationScope, [item]);
    else list.push(item);
  }
  const groups: ResourceGroup<T>[] = [];
  for (const [groupResource, byScope] of byResource) {
    const scopes: ScopeGroup<T>[] = [];
    for (const [scope, list] of byScope) scopes.push({ scope, items: list });
    groups.push({ resource: groupResource, scopes });
  }
  return groups;
}

/**
 * Hands `sink` an export in parts of one resource each (by object identity, in the order of
 * first appearance): an export of one resource is itself, no copy; an empty export has no parts.
 */
export function splitByResource<T extends { readonly resource: object }>(
  items: T[],
  sink: PartSink<T[]>,
): void {
  const first = items[0];
  if (first === undefined) return;
  const resource = first.resource;
  let i = 1;
  while (i < items.length && (items[i] as T).resource === resource) i++;
  if (i === items.length) {
    sink.part(items);
    return;
  }
  const parts = new Map<object, T[]>();
  for (const item of items) {
    const part = parts.get(item.resource);
    if (part === undefined) parts.set(item.resource, [item]);
    else part.push(item);
  }
  for (const part of parts.values()) sink.part(part);
}
