import type { ExportTally } from '../encoding/records.js';
import { jsValueText } from '../parquet/attribute-text.js';
import type { FlatStore } from './flat-parquet/store.js';
import {
  groupByResourceAndScope,
  type ResourceLike,
  type Scoped,
  type ScopeLike,
} from './otlp-groups.js';

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
      const write = scopeRows({ resource, scope, resourceSet, service });
      for (const item of scoped) {
        count(tally, item);
        write(item, store.addRow());
      }
    }
  }
}
