/**
 * The reader's half of otlp-rows.ts, in a module of its own so that an exporter never loads the
 * OTLP decoders (decode-request.ts, otlp-proto-decode.ts): test/integration/exporter-imports.test.ts.
 */
import { objectBudget, requestDecoders } from '../encoding/decode-request.js';
import type { OtlpObject } from '../encoding/otlp-proto-decode.js';
import { REQUEST } from '../encoding/otlp-schema.js';
import type { Decoder, SignalName, SignalRead } from './signal.js';

/**
 * A signal as the reader decodes it: each object is one request, in either OTLP format, or
 * Parquet. `checkJson`, when given, checks a decoded OTLP/JSON request's values and throws for
 * one the request's rows cannot show (only JSON can hold text where a number belongs).
 */
export function otlpRead(
  signal: SignalName,
  parquet: Decoder,
  checkJson: (request: OtlpObject) => void = () => {},
): SignalRead {
  const otlp = requestDecoders(REQUEST[signal].message);
  return {
    name: signal,
    decoders: {
      'otlp-json': {
        decode: (raw, context) => {
          const request = otlp.json(raw, objectBudget(context.maxDecompressedBytes));
          checkJson(request);
          return request;
        },
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
