import { requestDecoders } from '../../encoding/decode-request.js';
import { REQUEST } from '../../encoding/otlp-schema.js';
import type { SignalRead } from '../signal.js';

const otlp = requestDecoders(REQUEST.logs.message);

/** Log records, as the reader decodes them: each object is one ExportLogsServiceRequest. */
export const logsRead: SignalRead = {
  name: 'logs',
  decoders: {
    'otlp-json': { decode: otlp.json, synchronous: true },
    'otlp-proto': { decode: otlp.proto, synchronous: true },
    parquet: {
      decode: async () => {
        throw new Error('reading Parquet objects of log records is not implemented yet');
      },
      synchronous: false,
    },
  },
};
