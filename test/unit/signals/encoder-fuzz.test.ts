import { ProtobufMetricsSerializer } from '@opentelemetry/otlp-transformer';
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { resourceMetricsToJson } from '../../../src/signals/metrics/otlp-json.js';
import { resourceMetricsToProto } from '../../../src/signals/metrics/otlp-proto.js';
import { resourceMetrics } from '../../support/metrics-arbitraries.js';
import {
  type Canonical,
  decodeJsonExact,
  decodeJsonParsed,
  decodeProtobuf,
} from '../../support/otlp-reference.js';

/**
 * Cases per run: 800 (about 3 s on this 2-core machine). Measured with V8 block coverage, they
 * reach the blocks of src/ that 2000 reach, but for ProtoWriter.finish()'s branch for an output
 * past its initial capacity, which random exports reach by chance at any count. A fresh seed each
 * run keeps exploring; FUZZ_RUNS=30000 for a long local run.
 */
const numRuns = Number(process.env.FUZZ_RUNS ?? 800);

/**
 * A fresh seed each run, so CI keeps exploring; a failure report names its seed and path, and
 * FUZZ_SEED=<seed> FUZZ_PATH=<path> replays that case.
 */
const parameters: fc.Parameters<[ResourceMetrics]> = {
  numRuns,
  ...(process.env.FUZZ_SEED === undefined ? {} : { seed: Number(process.env.FUZZ_SEED) }),
  ...(process.env.FUZZ_PATH === undefined ? {} : { path: process.env.FUZZ_PATH }),
};

function official(rm: ResourceMetrics): Uint8Array {
  const bytes = ProtobufMetricsSerializer.serializeRequest(rm);
  if (bytes === undefined) throw new Error('the official serializer wrote nothing');
  return bytes;
}

/** -0 told apart from 0, which JSON.stringify drops the sign of. */
const signedZero = (_: string, v: unknown) => (Object.is(v, -0) ? '-0 (negative zero)' : v);

/** A decoded message as text: comparing text is quicker than a deep equality. */
const asText = (message: Canonical, indent?: number) => JSON.stringify(message, signedZero, indent);

/**
 * A check that throws unless a message is `expected`, naming the first line that differs with the
 * lines around it (a deep equality's diff would be cut short inside fast-check's report).
 */
function sameMessageAs(expected: Canonical): (what: string, actual: Canonical) => void {
  const expectedText = asText(expected);
  return (what, actual) => {
    if (asText(actual) === expectedText) return;
    const a = asText(actual, 1).split('\n');
    const e = asText(expected, 1).split('\n');
    let line = 0;
    while (a[line] === e[line]) line++;
    const around = (lines: string[]) => lines.slice(Math.max(0, line - 6), line + 3).join('\n');
    throw new Error(
      `${what} differs from the official message at line ${line + 1}\n` +
        `-- ours:\n${around(a)}\n-- official:\n${around(e)}`,
    );
  };
}

/** Our JSON of one ResourceMetrics is a record; a request holds a list of them. */
const ourJsonRequest = (rm: ResourceMetrics) =>
  `{"resourceMetrics":[${resourceMetricsToJson(rm)}]}`;

/** Our protobuf and JSON of `rm` decode to the message of the official serializer's protobuf. */
function encodesAsTheOfficialOne(rm: ResourceMetrics): void {
  const expectSame = sameMessageAs(decodeProtobuf(official(rm)));
  const proto = resourceMetricsToProto(rm);
  expectSame('our protobuf', decodeProtobuf(proto));
  const json = ourJsonRequest(rm);
  expectSame('our JSON, read at its written digits', decodeJsonExact(json));
  expectSame('our JSON, read after JSON.parse', decodeJsonParsed(json));
  // Encoded again, the spellings come from the attribute and bounds caches.
  expect(Buffer.from(resourceMetricsToProto(rm)).equals(proto), 'cached protobuf').toBe(true);
  expect(ourJsonRequest(rm), 'cached JSON').toBe(json);
}

describe('encoders on random metrics, decoded by an independent protobuf runtime', () => {
  test(
    `our protobuf and our JSON decode to the official ProtobufMetricsSerializer's message (${numRuns} cases)`,
    () => {
      const run = fc.check(fc.property(resourceMetrics, encodesAsTheOfficialOne), parameters);
      if (!run.failed) return;
      const replay = `FUZZ_SEED=${run.seed} FUZZ_PATH=${run.counterexamplePath} npx vitest run test/unit/signals/encoder-fuzz.test.ts`;
      throw new Error(`${fc.defaultReportMessage(run)}\n\nReplay: ${replay}`, {
        cause: run.errorInstance,
      });
    },
    Math.max(120_000, numRuns * 20), // slow CI machines; long local runs
  );
});
