import { deadlineTimer } from '../base/deadline.js';

const TIMEOUT = Symbol('disk deadline');

/**
 * A disk operation did not run to its end: `timeout`, it overran its deadline and was abandoned;
 * `stalled`, it was not started because an earlier one overran and has still not returned.
 */
export class DiskDeadlineError extends Error {
  readonly code: 'timeout' | 'stalled';
  constructor(code: 'timeout' | 'stalled', millis: number) {
    super(
      code === 'timeout'
        ? `the disk did not answer within ${millis} ms`
        : 'an earlier disk operation has still not returned (the disk may be hung)',
    );
    this.name = 'DiskDeadlineError';
    this.code = code;
  }
}

/**
 * Deadlines on disk operations. A hung disk (an NFS hard mount, an EBS stall) must not hold
 * up uploads: an operation past its deadline is abandoned, and until it returns no new one
 * starts, since each would take another of libuv's few threads (which DNS lookups need too).
 * One instance serves every operation on one spool directory: a disk is hung for all of them.
 */
export class DiskDeadline {
  readonly millis: number;
  #hung = 0;

  constructor(millis: number) {
    this.millis = millis;
  }

  /** True while an abandoned operation has not returned. */
  get stalled(): boolean {
    return this.#hung > 0;
  }

  /**
   * Runs `operation` unless the disk is stalled, and returns its result or rethrows its error.
   * Throws DiskDeadlineError when the disk is stalled or the operation overruns. An overrun
   * operation's result goes to `late` when (if ever) it arrives, so the caller can undo or use
   * it; the disk counts as working again by then. A late failure is ignored.
   */
  async run<T>(operation: () => Promise<T>, late: (value: T) => void = () => {}): Promise<T> {
    if (this.stalled) throw new DiskDeadlineError('stalled', this.millis);
    let timer: NodeJS.Timeout | undefined;
    const work = operation();
    const deadline = new Promise<typeof TIMEOUT>((resolve) => {
      timer = deadlineTimer(() => resolve(TIMEOUT), this.millis);
    });
    try {
      const first = await Promise.race([work, deadline]);
      if (first !== TIMEOUT) return first;
      this.#hung++;
      void work.then(
        (value) => {
          this.#hung--;
          late(value);
        },
        () => {
          this.#hung--;
        },
      );
      throw new DiskDeadlineError('timeout', this.millis);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** An errno code (EIO, ENOSPC, EMFILE, ...), or the deadline's `timeout` / `stalled`. */
export function diskErrorCode(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : 'unknown';
}
