/**
 * The reader's half of otlp-rows.ts, in a module of its own so that an exporter never loads the
 * OTLP decoders (decode-request.ts, otlp-proto-decode.ts): test/integration/exporter-imports.test.ts.
 */
import { objectBudget, requestDecoders } from '../encoding/decode-request.js';
import { REQUEST } from '../encoding/otlp-schema.js';
import type { Decoder, SignalName, SignalRead } from './signal.js';

/** A signal as the reader decodes it: each object is one request, in either OTLP format, or Parquet. */
export function otlpRead(signal: SignalName, parquet: Decoder): SignalRead {
  const otlp = requestDecoders(REQUEST[signal].message);
  return {
    name: signal,
    decoders: {
      'otlp-json': {
        decode: (raw, context) => otlp.json(raw, objectBudget(context.maxDecompressedBytes)),
        synchronous: true,
      },
      'otlp-proto': {
        decode: (raw, context) => otlp.proto(raw, objectBudget(context.maxDecompressedBytes)),
        synchronous: true,
      },
      parquet,
    },
  };
}
