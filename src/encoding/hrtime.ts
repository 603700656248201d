import type { HrTime } from '@opentelemetry/api';

/** 1e9 = 2^9 * 1953125: seconds * 1953125 stays exact in a double for any 32-bit seconds value. */
const NS_ODD_FACTOR = 1953125;
const TWO_POW_23 = 2 ** 23;
const TWO_POW_32 = 2 ** 32;

/** Unix nanoseconds of an HrTime as a decimal string (OTLP/JSON spelling), exact. */
export function hrTimeToNanosString(time: Readonly<HrTime>): string {
  const seconds = Math.trunc(time[0]);
  const nanos = Math.trunc(time[1]);
  if (seconds === 0) return String(nanos);
  return `${seconds}${String(nanos).padStart(9, '0')}`;
}

/**
 * Unix nanoseconds of an HrTime split in 32-bit halves for a fixed64 field, exact without BigInt:
 * seconds * 1e9 = (seconds * 1953125) * 2^9, and the product splits at bit 23 of the first factor.
 */
export function hrTimeToNanosParts(time: Readonly<HrTime>): { lo: number; hi: number } {
  const a = Math.trunc(time[0]) * NS_ODD_FACTOR;
  const nanos = Math.trunc(time[1]);
  let hi = Math.floor(a / TWO_POW_23);
  let lo = (a - hi * TWO_POW_23) * 512 + nanos;
  if (lo >= TWO_POW_32) {
    const carry = Math.floor(lo / TWO_POW_32);
    hi += carry;
    lo -= carry * TWO_POW_32;
  }
  return { lo, hi };
}
