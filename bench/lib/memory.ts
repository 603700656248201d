/** process.memoryUsage() after a full GC, in the four figures the memory targets are about. */
import { collectGarbage } from './stats.js';

export interface MemorySample {
  rss: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

export const MEMORY_FIELDS = ['rss', 'heapUsed', 'external', 'arrayBuffers'] as const;

export function memoryNow(): MemorySample {
  const m = process.memoryUsage();
  return { rss: m.rss, heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers };
}

/** After a GC (needs --expose-gc; every suite runs with it). */
export async function memoryAfterGc(): Promise<MemorySample> {
  if ((globalThis as { gc?: unknown }).gc === undefined) {
    throw new Error('run with --expose-gc (npm run bench does)');
  }
  await collectGarbage();
  return memoryNow();
}
