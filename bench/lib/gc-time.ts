/** Garbage-collection pause time inside a window, from the runtime's own 'gc' performance entries. */
import { type PerformanceEntry, PerformanceObserver } from 'node:perf_hooks';

const entries: PerformanceEntry[] = [];
const observer = new PerformanceObserver((list) => {
  entries.push(...list.getEntries());
});
observer.observe({ entryTypes: ['gc'] });

/**
 * Milliseconds of GC inside each key's windows (performance.now() readings), e.g. the exports
 * of each contender of interleaved samples.
 */
export async function gcMillisWithin<K>(
  windows: ReadonlyMap<K, ReadonlyArray<readonly [number, number]>>,
): Promise<Map<K, number>> {
  await new Promise((resolve) => setTimeout(resolve, 20)); // entries are delivered late
  const totals = new Map<K, number>();
  let last = 0;
  for (const [key, list] of windows) {
    let total = 0;
    for (const [start, end] of list) {
      last = Math.max(last, end);
      for (const e of entries) if (e.startTime >= start && e.startTime < end) total += e.duration;
    }
    totals.set(key, total);
  }
  const keep = entries.filter((e) => e.startTime >= last);
  entries.length = 0;
  entries.push(...keep);
  return totals;
}

export function stopGcObserver(): void {
  observer.disconnect();
}
