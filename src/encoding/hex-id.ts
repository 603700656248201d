/**
 * Trace and span ids. The SDK spells them in lower-case hex, and so does OTLP/JSON (not base64,
 * as protobuf's own JSON mapping would); protobuf carries their bytes. An id that is not
 * lower-case hex of even length is read as Buffer.from(id, 'hex') reads it (case-insensitive, up
 * to the first character that is not hex), so both formats carry the same bytes.
 */

const LOWER_HEX = /^(?:[0-9a-f]{2})*$/;

/** The value of each lower-case hex digit by its character code. */
export const HEX_VALUE = new Uint8Array(128);
for (let i = 0; i < 16; i++) HEX_VALUE['0123456789abcdef'.charCodeAt(i)] = i;

/** Lower-case hex of even length. */
export function isLowerHex(text: string): boolean {
  return LOWER_HEX.test(text);
}

/** An id as OTLP/JSON spells it: lower-case hex of its bytes ('' for none). */
export function hexId(id: string): string {
  return isLowerHex(id) ? id : Buffer.from(id, 'hex').toString('hex');
}

const ANY_CASE_HEX = /^[0-9a-fA-F]+$/;

/**
 * An id as Parquet's text columns store it: hex digits in lower case, as the OTLP formats carry
 * them and a reader's `traceId` looks them up (the OpenTelemetry API takes upper-case hex ids as
 * valid); any other text as it is.
 */
export function lowerHexText(id: string): string {
  // Ids come in lower case: one scan, and no regular expression, per id of every span.
  const lower = id.toLowerCase();
  return lower === id || !ANY_CASE_HEX.test(id) ? id : lower;
}
