import { execFileSync } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir, removeDir } from './temp-dir.js';

/**
 * Holds every thread of libuv's pool (Linux), so that what runs there waits and what runs on the
 * event loop does not: each thread blocks opening a FIFO for reading until release() opens its
 * other end. Nothing spins meanwhile.
 */
export async function holdLibuvPool(): Promise<{ release(): Promise<void> }> {
  const dir = await makeTempDir('otel-s3-pool-');
  const size = Number(process.env.UV_THREADPOOL_SIZE ?? 4);
  const fifos = Array.from({ length: size }, (_, i) => join(dir, `thread-${i}`));
  execFileSync('mkfifo', fifos);
  const readers = fifos.map((fifo) => open(fifo, 'r'));
  let released = false;
  return {
    /** Lets the threads go (again: nothing). */
    async release() {
      if (released) return;
      released = true;
      // A writer's open returns once the reader's has: each held thread goes free.
      for (const fifo of fifos) closeSync(openSync(fifo, 'w'));
      for (const reader of await Promise.all(readers)) await reader.close();
      await removeDir(dir);
    },
  };
}

/** Resolves after `n` turns of the event loop. */
export async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
}
