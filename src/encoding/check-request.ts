import type { OtlpObject, OtlpValue } from './otlp-proto-decode.js';

/**
 * How deep objects and arrays may nest in a request. OTLP takes 13 levels to reach a data
 * point's attribute value and each level of an array-valued attribute adds 3 (2 protobuf
 * messages), so this is about the default recursion limit of Google's protobuf runtimes (100
 * messages), and recursive code (JSON.stringify, anyValue) stays far from the stack's end.
 */
export const MAX_NESTING_DEPTH = 200;

const UINT64_MAX = 2n ** 64n - 1n;

/**
 * What makes a decoded request unsafe to hand on, or undefined when it is fine: objects and
 * arrays nested deeper than MAX_NESTING_DEPTH (recursive code such as JSON.stringify would
 * overflow the stack on them), or a `…UnixNano` time that is not a uint64 (no date can show
 * it). After this check, a reader of the request may walk it recursively and format its times.
 */
export function requestProblem(request: OtlpObject): string | undefined {
  // An explicit stack, not recursion: this walk is what must survive a value nested 200,000 deep.
  const values: (OtlpObject | OtlpValue[])[] = [request];
  const depths: number[] = [1];
  for (;;) {
    const value = values.pop();
    const depth = depths.pop() as number;
    if (value === undefined) return undefined;
    if (depth > MAX_NESTING_DEPTH) {
      return `values nested deeper than ${MAX_NESTING_DEPTH} levels (an attribute of arrays or key-value lists nested too deep)`;
    }
    if (Array.isArray(value)) {
      for (const item of value) {
        if (typeof item === 'object') {
          values.push(item);
          depths.push(depth + 1);
        }
      }
      continue;
    }
    // JSON's null is an object too: it has no keys.
    for (const key in value) {
      const child = value[key];
      if (typeof child === 'object') {
        values.push(child);
        depths.push(depth + 1);
      } else if (key.endsWith('UnixNano') && !isNanos(child as OtlpValue)) {
        return `${key} ${JSON.stringify(child)} is not a time in nanoseconds since 1970 (an unsigned 64-bit integer)`;
      }
    }
  }
}

/** A uint64 as the OTLP/JSON mapping spells it (decimal text, or a number); '' is unset. */
function isNanos(value: OtlpValue): boolean {
  if (typeof value === 'number') return Number.isInteger(value) && value >= 0 && value < 2 ** 64;
  if (typeof value !== 'string') return false;
  if (value === '') return true;
  return /^\d{1,20}$/.test(value) && (value.length < 20 || BigInt(value) <= UINT64_MAX);
}
