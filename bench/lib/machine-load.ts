/**
 * How busy the machine was besides us: CPU time of all processes (/proc/stat) minus our own and
 * our reaped children's (/proc/self/stat), over wall time. Other engineers run test suites on
 * this 2-core machine, so every figure is reported with the foreign load it was measured under.
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

interface Snapshot {
  at: number;
  busyTicks: number;
  ownTicks: number;
}

function snapshot(): Snapshot | undefined {
  try {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]?.trim().split(/\s+/) ?? [];
    // user nice system idle iowait irq softirq steal
    const [user, nice, system, , , irq, softirq, steal] = cpu.slice(1).map(Number);
    const busyTicks =
      (user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0);
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // Fields after the command name "(...)": utime is field 14, cutime/cstime 16/17 (1-based).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const own = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i] ?? 0), 0);
    return { at: performance.now(), busyTicks, ownTicks: own };
  } catch {
    return undefined; // not Linux
  }
}

export interface LoadReport {
  /** Average cores kept busy by other processes (0–cores). */
  foreignCores: number | null;
  /** Average cores our process tree used. */
  ownCores: number | null;
  loadavg1: number;
}

/** Starts measuring; the returned function tells the load since then. */
export function measureLoad(): () => LoadReport {
  const start = snapshot();
  return () => {
    const end = snapshot();
    if (start === undefined || end === undefined) {
      return { foreignCores: null, ownCores: null, loadavg1: loadavg()[0] ?? 0 };
    }
    const seconds = (end.at - start.at) / 1000;
    const own = (end.ownTicks - start.ownTicks) / TICKS_PER_SECOND / seconds;
    const all = (end.busyTicks - start.busyTicks) / TICKS_PER_SECOND / seconds;
    return {
      foreignCores: Math.max(0, all - own),
      ownCores: own,
      loadavg1: loadavg()[0] ?? 0,
    };
  };
}
