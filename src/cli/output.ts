import type { Writable } from 'node:stream';

const FLUSH_BYTES = 64 * 1024;

/**
 * Lines to stdout, buffered into large writes (one write per line is a syscall each on a
 * pipe) and paced by backpressure, so a slow reader of the output slows the download instead
 * of filling memory. When the reader goes away (EPIPE, e.g. `| head`), `closed` turns true and
 * `onClosed` runs once; further lines are dropped.
 */
export class LineWriter {
  readonly #stream: Writable;
  #buffer: string[] = [];
  #bytes = 0;
  #closed = false;
  #failure: Error | undefined;

  constructor(stream: Writable, onClosed: () => void = () => {}) {
    this.#stream = stream;
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE' && error.code !== 'ERR_STREAM_DESTROYED') this.#failure = error;
      if (!this.#closed) {
        this.#closed = true;
        onClosed();
      }
    });
  }

  /** True once the output is gone; the command should stop reading. */
  get closed(): boolean {
    return this.#closed;
  }

  /** A write error other than the reader going away (e.g. a full disk), to fail with. */
  get failure(): Error | undefined {
    return this.#failure;
  }

  /** Queues a line; writes when enough is queued. */
  async line(text: string): Promise<void> {
    if (this.#closed) return;
    this.#buffer.push(text, '\n');
    this.#bytes += text.length + 1;
    if (this.#bytes >= FLUSH_BYTES) await this.flush();
  }

  /** Writes what is queued, and waits while the stream's buffer is full. */
  async flush(): Promise<void> {
    if (this.#buffer.length === 0 || this.#closed) return;
    const chunk = this.#buffer.join('');
    this.#buffer = [];
    this.#bytes = 0;
    if (!this.#stream.write(chunk)) await drained(this.#stream);
  }
}

/**
 * Until the stream drains, closes or fails, with every listener taken off again: racing two
 * `events.once()` left the loser's listeners (and once()'s 'error' listener) on stdout at every
 * wait, and after ten waits Node warned "MaxListenersExceededWarning: ... 11 error listeners
 * added to [Socket]".
 */
function drained(stream: Writable): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      stream.off('drain', done);
      stream.off('close', done);
      stream.off('error', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('close', done);
    stream.on('error', done);
  });
}
