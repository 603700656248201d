import type { ExportTally } from '../encoding/records.js';
import type { ColumnBuilders, TransferableColumns } from './signal.js';

/** What a batch's column store gives the builders over it (the metrics' and the flat tables'). */
export interface BatchStore<Mark extends { readonly rows: number }, Sealed> {
  readonly rows: number;
  /** Memory held now, capacity included (estimated). */
  readonly bytes: number;
  mark(): Mark;
  rollback(mark: Mark): void;
  /** The columns, handed over: the store is not used after this. */
  seal(): Sealed;
}

/**
 * Column builders over one store per batch: none while the batch is empty (before the first
 * append after a seal), so that an empty batch holds no memory: an idle or shut-down exporter's
 * bufferedBytes is 0, not the first arrays' capacity. A signal's builders say how an item is
 * appended, through atomically().
 */
export abstract class StoreBuilders<
  Item,
  Mark extends { readonly rows: number },
  Sealed extends TransferableColumns,
  Store extends BatchStore<Mark, Sealed>,
> implements ColumnBuilders<Item>
{
  #store: Store | undefined;

  /** `newStore` makes a batch's store; `empty` is the mark of an empty one. */
  constructor(
    private readonly newStore: () => Store,
    private readonly empty: Mark,
  ) {}

  abstract append(item: Item, tally: ExportTally): void;

  mark(): Mark {
    return this.#store?.mark() ?? this.empty;
  }

  rollback(mark: unknown): void {
    const m = mark as Mark;
    // Back to empty: no store, so that nothing of what was taken back stays in memory.
    if (m.rows === 0) this.#store = undefined;
    else this.#store?.rollback(m);
  }

  /** Items (rows) appended since the last seal. */
  get rows(): number {
    return this.#store?.rows ?? 0;
  }

  /** Memory the builders hold now: typed-array capacities, dictionaries, cache entries (estimated). */
  get bytes(): number {
    return this.#store?.bytes ?? 0;
  }

  /** The columns, with the ArrayBuffers to transfer; the builders start empty again. */
  seal(): Sealed {
    const sealed = (this.#store ?? this.newStore()).seal();
    this.#store = undefined;
    return sealed;
  }

  /**
   * All of an append or none of it: rows of a call that threw are taken back, and `undo` (if any)
   * puts back what the call changed beside the store.
   */
  protected atomically<T>(append: (store: Store) => T, undo?: () => void): T {
    this.#store ??= this.newStore();
    const mark = this.#store.mark();
    try {
      return append(this.#store);
    } catch (error) {
      undo?.();
      this.rollback(mark);
      throw error;
    }
  }
}
