/** Garbage-collection pause time inside a window, from the runtime's own 'gc' performance entries. */
import { type PerformanceEntry, PerformanceObserver } from 'node:perf_hooks';

const entries: PerformanceEntry[] = [];
const observer = new PerformanceObserver((list) => {
  entries.push(...list.getEntries());
});
observer.observe({ entryTypes: ['gc'] });

/** Milliseconds of GC between two performance.now() readings (entries are delivered late). */
export async function gcMillisBetween(start: number, end: number): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, 20));
  let total = 0;
  for (const e of entries) {
    if (e.startTime >= start && e.startTime < end) total += e.duration;
  }
  // Keep the list short: nothing before `end` is asked for again.
  const keep = entries.filter((e) => e.startTime >= end);
  entries.length = 0;
  entries.push(...keep);
  return total;
}

export function stopGcObserver(): void {
  observer.disconnect();
}
