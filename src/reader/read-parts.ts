import { requestProblem } from '../encoding/check-request.js';
import type { OtlpObject } from '../encoding/otlp-proto-decode.js';
import type { SignalName } from '../layout/formats.js';
import { ObjectDecodeError, REQUEST_FIELD } from './decode-object.js';
import {
  ObjectGoneError,
  RangeIgnoredError,
  RangeOverrunError,
  ReadAccessError,
  readFailure,
} from './errors.js';
import { openParquetParts } from './parquet-parts.js';
import { ObjectTooLargeError, type ReadLimits } from './read-limits.js';
import { objectRanges } from './replaced-inputs.js';
import type { ObjectSource } from './source.js';

/** One row group of a large Parquet object, as readMetrics yields it. */
export interface ObjectPart {
  request: OtlpObject;
  rawBytes: number;
  /** The file's footer (its last bytes). */
  footer: Uint8Array;
  index: number;
  count: number;
}

/** A part that cannot be read: where it failed, and why (`cause`, as onError reports it). */
export class PartError extends Error {
  readonly stage: 'fetch' | 'decompress' | 'decode';
  constructor(key: string, cause: Error) {
    // Stored bytes over maxObjectBytes (a row group, the footer): refused before they are
    // fetched, reported as an object read whole is.
    const fetchFailed =
      cause instanceof ObjectGoneError ||
      cause instanceof RangeIgnoredError ||
      cause instanceof RangeOverrunError ||
      (cause instanceof ObjectTooLargeError && cause.limit === 'maxObjectBytes');
    // A row group's pages past maxDecompressedBytes: decompression, as for an object read whole.
    const decompressed =
      cause instanceof ObjectTooLargeError && cause.limit === 'maxDecompressedBytes';
    const stage = decompressed ? 'decompress' : 'decode';
    super(cause.message, {
      cause: fetchFailed ? cause : new ObjectDecodeError(key, stage, cause.message, cause),
    });
    this.name = 'PartError';
    this.stage = decompressed
      ? 'decompress'
      : fetchFailed || cause instanceof ObjectTooLargeError
        ? 'fetch'
        : 'decode';
  }
}

/**
 * A large Parquet object, one row group after another; the limits apply to each row group.
 * Throws PartError for a part that cannot be read (the parts before it were yielded);
 * ReadAccessError and aborts as they are. With `traceId` (lower-case hex), each part holds that
 * trace's items only, and a row group that cannot hold it is not fetched: its part is empty.
 */
export async function* readParts(
  source: ObjectSource,
  object: { key: string; size: number; signal: SignalName },
  limits: ReadLimits,
  signal: AbortSignal,
  traceId?: string,
): AsyncGenerator<ObjectPart> {
  const checked = async <T>(step: () => Promise<T>): Promise<T> => {
    try {
      return await step();
    } catch (error) {
      if (error instanceof ReadAccessError || signal.aborted) throw error;
      throw new PartError(object.key, readFailure(error));
    }
  };
  const ranges = objectRanges(source, object.key, object.size, signal);
  const parts = await checked(() => openParquetParts(ranges, limits, object.signal));
  for (let index = 0; index < parts.count; index++) {
    const part = await checked(async () => {
      if (traceId !== undefined && !(await parts.mayHoldTrace(index, traceId))) {
        return { request: emptyRequest(object.signal), rawBytes: 0 };
      }
      const read = await parts.read(index, traceId);
      const problem = requestProblem(read.request);
      if (problem !== undefined) throw new Error(problem);
      return read;
    });
    const { request, rawBytes } = part;
    yield { request, rawBytes, footer: parts.footer, index, count: parts.count };
  }
}

/** A request of no items, as a row group left out holds. */
function emptyRequest(signal: SignalName): OtlpObject {
  return { [REQUEST_FIELD[signal]]: [] };
}
