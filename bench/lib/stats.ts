/** Summary statistics of repeated measurements: the median is the figure, the spread the noise. */

export interface Summary {
  median: number;
  min: number;
  max: number;
  /** (max - min) / median, in percent: how noisy the rounds were. */
  spreadPct: number;
  samples: number[];
}

export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const at = (sorted.length - 1) * q;
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  const a = sorted[lo] as number;
  const b = sorted[hi] as number;
  return a + (b - a) * (at - lo);
}

export const median = (values: readonly number[]): number => quantile(values, 0.5);

export function summarize(samples: readonly number[]): Summary {
  const m = median(samples);
  const min = Math.min(...samples);
  const max = Math.max(...samples);
  return {
    median: m,
    min,
    max,
    spreadPct: m === 0 ? 0 : ((max - min) / Math.abs(m)) * 100,
    samples: [...samples],
  };
}

/** Runs a full garbage collection when the process was started with --expose-gc. */
export async function collectGarbage(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) return;
  // Twice, with a turn of the event loop between: finalizers of the first pass free native memory.
  gc();
  await new Promise((resolve) => setImmediate(resolve));
  gc();
}
