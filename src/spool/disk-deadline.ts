/** What a disk operation under a deadline came to. */
const TIMEOUT = Symbol('disk deadline');

export type DiskOutcome<T> =
  | { kind: 'done'; value: T }
  /** It did not finish in time; it was abandoned (and `late` runs if it finishes later). */
  | { kind: 'timeout' }
  /** Not started: an earlier operation overran its deadline and has still not returned. */
  | { kind: 'stalled' };

/**
 * Disk operations with a deadline. A hung disk (an NFS hard mount, an EBS stall) must not hold
 * up uploads: an operation past its deadline is abandoned, and until it returns no new one
 * starts, since each would take another of libuv's few threads (which DNS lookups need too).
 */
export class DiskDeadline {
  readonly #millis: number;
  #hung = 0;

  constructor(millis: number) {
    this.#millis = millis;
  }

  /** True while an abandoned operation has not returned. */
  get stalled(): boolean {
    return this.#hung > 0;
  }

  /**
   * Runs `operation` unless the disk is stalled. If it overruns, `late` receives its result
   * when (if ever) it arrives, so the caller can undo it; a late failure is ignored.
   */
  async run<T>(operation: () => Promise<T>, late: (value: T) => void): Promise<DiskOutcome<T>> {
    if (this.stalled) return { kind: 'stalled' };
    let timer: NodeJS.Timeout | undefined;
    const work = operation();
    const deadline = new Promise<typeof TIMEOUT>((resolve) => {
      timer = setTimeout(() => resolve(TIMEOUT), this.#millis);
    });
    try {
      const first = await Promise.race([work, deadline]);
      if (first !== TIMEOUT) return { kind: 'done', value: first };
      this.#hung++;
      void work.then(late, () => {}).finally(() => this.#hung--);
      return { kind: 'timeout' };
    } finally {
      clearTimeout(timer);
    }
  }
}
