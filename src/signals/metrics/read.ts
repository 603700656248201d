import type { OtlpObject } from '../../encoding/otlp-proto-decode.js';
import { otlpRead } from '../otlp-read.js';
import type { SignalRead } from '../signal.js';
import { checkPointNumbers } from './rows.js';

const read = otlpRead('metrics', {
  // Loaded when a Parquet object is read: the exporter never loads the Parquet reader.
  decode: async (raw, context) => {
    const { parquetToRequest } = await import('./parquet/read.js');
    return (await parquetToRequest(raw, context)).request;
  },
  synchronous: false,
});
const json = read.decoders['otlp-json'];

/**
 * Metrics, as the reader decodes them: each object is one ExportMetricsServiceRequest. An
 * OTLP/JSON one whose data point holds no number in a number field ("abc", true), or none of
 * the field's kind (a count of 1.5 or -1, a scale of 2^31), is refused, naming the metric and
 * the field, never read as a row of 0 or of a number no OTLP field holds.
 */
export const metricsRead: SignalRead = {
  ...read,
  decoders: {
    ...read.decoders,
    'otlp-json': {
      decode: (raw, context) => {
        const request = json.decode(raw, context) as OtlpObject;
        checkPointNumbers(request);
        return request;
      },
      synchronous: true,
    },
  },
};
