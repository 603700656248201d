import type { HrTime } from '@opentelemetry/api';

/** 1e9 = 2^9 * 1953125: seconds * 1953125 stays exact in a double for any 32-bit seconds value. */
const NS_ODD_FACTOR = 1953125;
const TWO_POW_23 = 2 ** 23;
const TWO_POW_32 = 2 ** 32;

/**
 * Refuses an HrTime that is no time: a part NaN or infinite (a caller's bug; the official
 * serializers throw on it too). Every encoder calls it before storing a time, so no format keeps
 * 0 or a made-up number for it: the export is refused and counted.
 */
export function checkFiniteHrTime(time: Readonly<HrTime>): void {
  if (!(Number.isFinite(time[0]) && Number.isFinite(time[1]))) {
    throw new RangeError(
      `HrTime [${time[0]}, ${time[1]}] is not a time: its seconds and nanoseconds must be finite numbers`,
    );
  }
}

/**
 * Unix nanoseconds of an HrTime as a decimal string (OTLP/JSON spelling), exact, as the official
 * serializer reads it: each part cut to an integer, then seconds × 1e9 + nanoseconds (the SDK's
 * rounding can hand over 1e9 nanoseconds; a caller's own HrTime anything).
 */
export function hrTimeToNanosString(time: Readonly<HrTime>): string {
  const seconds = Math.trunc(time[0]);
  const nanos = Math.trunc(time[1]);
  if (!(seconds >= 0 && seconds <= Number.MAX_SAFE_INTEGER && nanos >= 0 && nanos < 1e9)) {
    checkFiniteHrTime(time);
    return String(BigInt(seconds) * 1_000_000_000n + BigInt(nanos));
  }
  if (seconds === 0) return String(nanos);
  return `${seconds}${String(nanos).padStart(9, '0')}`;
}

/**
 * Unix nanoseconds of an HrTime split in 32-bit halves for a fixed64 field, exact: seconds * 1e9
 * = (seconds * 1953125) * 2^9, and the product splits at bit 23 of the first factor. Past 2116
 * (seconds * 1953125 beyond 2^53, where a double no longer holds it) BigInt does it; past 2^64
 * ns, the low 64 bits.
 */
export function hrTimeToNanosParts(time: Readonly<HrTime>): { lo: number; hi: number } {
  const a = Math.trunc(time[0]) * NS_ODD_FACTOR;
  const nanos = Math.trunc(time[1]);
  if (!(Number.isSafeInteger(a) && Number.isFinite(nanos))) {
    checkFiniteHrTime(time);
    const n = BigInt(Math.trunc(time[0])) * 1_000_000_000n + BigInt(nanos);
    return { lo: Number(BigInt.asUintN(32, n)), hi: Number(BigInt.asUintN(32, n >> 32n)) };
  }
  let hi = Math.floor(a / TWO_POW_23);
  let lo = (a - hi * TWO_POW_23) * 512 + nanos;
  if (lo >= TWO_POW_32) {
    const carry = Math.floor(lo / TWO_POW_32);
    hi += carry;
    lo -= carry * TWO_POW_32;
  }
  return { lo, hi };
}
