/**
 * The span and log record encoders on random exports, each against its official serializer
 * (support/encoder-check.ts); the exports from the SDK's own providers are in
 * traces-encoders.test.ts and logs-encoders.test.ts.
 */
import {
  describeFuzzedEncoders,
  LOG_RECORD_ENCODERS,
  SPAN_ENCODERS,
} from '../../support/encoder-check.js';

const TEST_FILE = 'test/unit/signals/signal-encoders-fuzz.test.ts';

describeFuzzedEncoders(SPAN_ENCODERS, TEST_FILE);
describeFuzzedEncoders(LOG_RECORD_ENCODERS, TEST_FILE);
