import { requestDecoders } from '../../encoding/decode-request.js';
import { REQUEST } from '../../encoding/otlp-schema.js';
import type { SignalRead } from '../signal.js';

const otlp = requestDecoders(REQUEST.traces.message);

/** Spans, as the reader decodes them: each object is one ExportTraceServiceRequest. */
export const tracesRead: SignalRead = {
  name: 'traces',
  decoders: {
    'otlp-json': { decode: otlp.json, synchronous: true },
    'otlp-proto': { decode: otlp.proto, synchronous: true },
    parquet: {
      decode: async () => {
        throw new Error('reading Parquet objects of spans is not implemented yet');
      },
      synchronous: false,
    },
  },
};
