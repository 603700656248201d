import type { Writable } from 'node:stream';
import { MultiBar } from 'cli-progress';
import { formatBytes } from '../base/byte-size.js';

/** Progress of a download, and stderr lines that must not break it. */
export interface Progress {
  /** Shows the bar for `objects` objects of `bytes` stored bytes in all. */
  start(objects: number, bytes: number): void;
  /** One more object done (read or skipped), of `size` stored bytes. */
  advance(size: number): void;
  /** A line on stderr, above the bar while it is shown. */
  log(line: string): void;
  stop(): void;
}

/** No bar: stderr lines go straight out. */
export function noProgress(stderr: Writable): Progress {
  return {
    start() {},
    advance() {},
    log: (line) => void stderr.write(`${line}\n`),
    stop() {},
  };
}

/** A cli-progress bar on stderr (only used when stderr is a terminal). */
export function progressBar(stderr: Writable): Progress {
  let bars: MultiBar | undefined;
  let bar: ReturnType<MultiBar['create']> | undefined;
  let done = 0;
  let total = 0;
  return {
    start(objects, bytes) {
      total = bytes;
      bars = new MultiBar({
        format: ' reading {bar} {value}/{total} objects | {done} of {size} | ETA {eta_formatted}',
        barsize: 30,
        hideCursor: true,
        clearOnComplete: true,
        stream: stderr,
      });
      bar = bars.create(objects, 0, { done: formatBytes(0), size: formatBytes(total) });
    },
    advance(size) {
      done += size;
      bar?.increment(1, { done: formatBytes(done), size: formatBytes(total) });
    },
    log(line) {
      if (bars === undefined) stderr.write(`${line}\n`);
      else bars.log(`${line}\n`);
    },
    stop() {
      bars?.stop();
      bars = undefined;
      bar = undefined;
    },
  };
}
