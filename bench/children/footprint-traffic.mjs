// @ts-check
/**
 * What the footprint suite's service records, and how its memory is read: shared by
 * bench/children/footprint-service.mjs (the service itself) and
 * bench/children/parquet-breakdown.mjs (the same traffic, collected ahead). Plain JavaScript on
 * plain Node.js, as both are.
 */
import { readFileSync } from 'node:fs';

/**
 * A counter and a histogram of `series` HTTP routes on `meter`; each call of the function
 * returned records every series once (the values move with each call).
 * @param {import('@opentelemetry/api').Meter} meter @param {number} series @returns {() => void}
 */
export function footprintTraffic(meter, series) {
  const counter = meter.createCounter('http.server.requests');
  const histogram = meter.createHistogram('http.server.request.duration', { unit: 's' });
  const attributes = Array.from({ length: series }, (_, i) => ({
    'http.route': `/api/v1/resource/${i}`,
    'http.request.method': i % 3 === 0 ? 'POST' : 'GET',
    'http.response.status_code': 200 + (i % 5),
  }));
  let tick = 0;
  return () => {
    tick++;
    for (const [i, a] of attributes.entries()) {
      counter.add(1 + ((i + tick) % 7), a);
      histogram.record(((i * 7919 + tick * 104729) % 1000) / 1000, a);
    }
  };
}

/**
 * Lines of /proc/self/status in bytes (`VmRSS`, `VmHWM`: kB there); undefined where there is no
 * /proc (not Linux).
 * @param {string[]} keys @returns {Record<string, number> | undefined}
 */
export function procStatus(keys) {
  let text;
  try {
    text = readFileSync('/proc/self/status', 'utf8');
  } catch {
    return undefined; // not Linux
  }
  return Object.fromEntries(
    keys.map((key) => [
      key,
      Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text)?.[1]) * 1024,
    ]),
  );
}

/**
 * The process's resident high-water mark in bytes: the kernel's VmHWM (every page ever resident
 * at once, however briefly), which a 100 ms sample of RSS can miss; resourceUsage().maxRSS
 * (getrusage, the same figure) where /proc is not there.
 */
export function highWaterMark() {
  const hwm = procStatus(['VmHWM'])?.VmHWM;
  return hwm !== undefined && Number.isFinite(hwm) ? hwm : process.resourceUsage().maxRSS * 1024;
}
