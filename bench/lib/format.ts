/** Number formatting for the markdown tables. */

export const MiB = 1024 * 1024;

export function fmtInt(n: number): string {
  return Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : String(n);
}

/** 3 significant digits, thousands separated. */
export function fmtNum(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  const abs = Math.abs(n);
  if (abs >= 1000) return fmtInt(n);
  if (abs >= 100) return n.toFixed(0);
  if (abs >= 10) return n.toFixed(1);
  return n.toFixed(2);
}

export function fmtMs(ms: number): string {
  return `${fmtNum(ms)} ms`;
}

export function fmtMiB(bytes: number): string {
  return `${fmtNum(bytes / MiB)} MiB`;
}

export function fmtRate(perSecond: number): string {
  if (perSecond >= 1e6) return `${(perSecond / 1e6).toFixed(2)} M/s`;
  if (perSecond >= 1e3) return `${(perSecond / 1e3).toFixed(1)} k/s`;
  return `${perSecond.toFixed(0)}/s`;
}

export function fmtPct(p: number): string {
  return `±${p < 10 ? p.toFixed(1) : p.toFixed(0)}%`;
}
