/**
 * How exports become records and records one object, for every signal: one Export*ServiceRequest
 * per object, as OTLP readers (the Collector's awss3receiver) expect. A signal brings the encoder
 * of one export and, for OTLP/JSON, the name of its request's list field.
 */

/** How records join into one object: text around and between them (OTLP/JSON), or nothing (protobuf). */
export interface Framing {
  head: string;
  separator: string;
  tail: string;
}

/**
 * What the one walk of an export (its encoding, or its append to column builders) also counts:
 * its items (data points, spans, log records), and with `times` the time of its oldest item
 * (partitionTime 'data').
 */
export interface ExportTally {
  items: number;
  /** Whether the walk notes times (only partitionTime 'data' needs them). */
  readonly times: boolean;
  /** The oldest item's time in ms since the epoch; undefined until one is noted. */
  oldestMillis: number | undefined;
}

export function newTally(times: boolean): ExportTally {
  return { items: 0, times, oldestMillis: undefined };
}

/** Notes an item's time, given as the SDK's [seconds, nanoseconds]. */
export function noteTime(tally: ExportTally, [seconds, nanos]: readonly [number, number]): void {
  const millis = seconds * 1000 + Math.floor(nanos / 1e6);
  if (tally.oldestMillis === undefined || millis < tally.oldestMillis) tally.oldestMillis = millis;
}

/** One export as a record, and how a batch of records becomes the bytes of one object. */
export interface RecordFormat<Item> {
  /** Encodes one export; its items (and times) are counted into `tally` on the way. */
  encode(item: Item, tally?: ExportTally): Buffer;
  /** Bytes the object adds around `count` records. */
  overhead(count: number): number;
  /** How records join into one object, for the worker that makes object bodies. */
  framing: Framing | null;
  /** One object from its records, on this thread (the fallback when the worker fails). */
  assemble(records: readonly Buffer[], recordBytes: number): Buffer;
}

const COMMA = 0x2c;

/**
 * `{"resourceMetrics":[r1,r2,...]}\n`: one request on one line (a valid JSON-lines file), each
 * record one element of the request's list field (`resourceMetrics`, `resourceSpans`,
 * `resourceLogs`).
 */
export function jsonRecords<Item>(
  listField: string,
  encode: (item: Item, tally?: ExportTally) => Buffer,
): RecordFormat<Item> {
  const framing: Framing = { head: `{"${listField}":[`, separator: ',', tail: ']}\n' };
  const head = Buffer.from(framing.head);
  const tail = Buffer.from(framing.tail);
  const overhead = (count: number) => head.length + tail.length + Math.max(0, count - 1);
  return {
    encode,
    framing,
    overhead,
    assemble(records, recordBytes) {
      const out = Buffer.allocUnsafeSlow(recordBytes + overhead(records.length));
      let at = head.copy(out, 0);
      records.forEach((record, i) => {
        if (i > 0) out[at++] = COMMA;
        at += record.copy(out, at);
      });
      tail.copy(out, at);
      return out;
    },
  };
}

/** Serialized requests concatenate into one valid request: records are joined as they are. */
export function protoRecords<Item>(
  encode: (item: Item, tally?: ExportTally) => Buffer,
): RecordFormat<Item> {
  return {
    encode,
    framing: null,
    overhead: () => 0,
    assemble(records, recordBytes) {
      const out = Buffer.allocUnsafeSlow(recordBytes);
      let at = 0;
      for (const record of records) at += record.copy(out, at);
      return out;
    },
  };
}
