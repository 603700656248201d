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

/** Whole seconds below this one are times OTLP holds whatever their nanoseconds below 1e9. */
const MAX_SECONDS = 18_446_744_073;
/** 2^64: the first time (in nanoseconds) OTLP's uint64 does not hold. */
const TWO_POW_64_NS = 2n ** 64n;

/**
 * Refuses an HrTime that is no time (checkFiniteHrTime) or a time OTLP does not hold: its
 * nanoseconds (each part cut to an integer, then seconds × 1e9 + nanoseconds) are a uint64, so
 * a time before 1970 or from 2^64 ns on (2554-07-21T23:34:33.709551616Z) is refused in every
 * format alike. (The official serializers write such a time as a negative or too long decimal
 * in OTLP/JSON, which no OTLP reader takes, and as other bits in protobuf.)
 */
export function checkOtlpTime(time: Readonly<HrTime>): void {
  checkFiniteHrTime(time);
  const n = BigInt(Math.trunc(time[0])) * 1_000_000_000n + BigInt(Math.trunc(time[1]));
  if (n < 0n || n >= TWO_POW_64_NS) {
    throw new RangeError(
      `HrTime [${time[0]}, ${time[1]}] is outside what an OTLP time holds: uint64 nanoseconds, 1970-01-01T00:00:00Z to 2554-07-21T23:34:33.709551615Z`,
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
  if (!(seconds >= 0 && seconds < MAX_SECONDS && nanos >= 0 && nanos < 1e9)) {
    checkOtlpTime(time);
    return String(BigInt(seconds) * 1_000_000_000n + BigInt(nanos));
  }
  if (seconds === 0) return String(nanos);
  return `${seconds}${String(nanos).padStart(9, '0')}`;
}

/**
 * Unix nanoseconds of an HrTime split in 32-bit halves for a fixed64 field, exact: seconds * 1e9
 * = (seconds * 1953125) * 2^9, and the product splits at bit 23 of the first factor. Past 2116
 * (seconds * 1953125 beyond 2^53, where a double no longer holds it) BigInt does it. A time
 * before 1970 or from 2^64 ns on is refused (checkOtlpTime).
 */
export function hrTimeToNanosParts(time: Readonly<HrTime>): { lo: number; hi: number } {
  const a = Math.trunc(time[0]) * NS_ODD_FACTOR;
  const nanos = Math.trunc(time[1]);
  // Nanoseconds within ±2^32 keep the sum below exact (larger ones, any NaN: BigInt).
  if (!(Number.isSafeInteger(a) && a >= 0 && nanos > -TWO_POW_32 && nanos < TWO_POW_32)) {
    checkOtlpTime(time);
    const n = BigInt(Math.trunc(time[0])) * 1_000_000_000n + BigInt(nanos);
    return { lo: Number(BigInt.asUintN(32, n)), hi: Number(BigInt.asUintN(32, n >> 32n)) };
  }
  let hi = Math.floor(a / TWO_POW_23);
  let lo = (a - hi * TWO_POW_23) * 512 + nanos;
  if (lo >= TWO_POW_32 || lo < 0) {
    // A carry, or a borrow for negative nanoseconds.
    const carry = Math.floor(lo / TWO_POW_32);
    hi += carry;
    lo -= carry * TWO_POW_32;
  }
  if (hi < 0) checkOtlpTime(time);
  return { lo, hi };
}
