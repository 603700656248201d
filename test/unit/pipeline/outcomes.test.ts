import { diag } from '@opentelemetry/api';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { Episodes } from '../../../src/base/log.js';
import {
  BUFFER_FULL_QUIET_MILLIS,
  Outcomes,
  UNREACHABLE_ALERT_AFTER_MILLIS,
} from '../../../src/pipeline/outcomes.js';
import { SealedBatch } from '../../../src/pipeline/sealed-batch.js';
import { emptyStats } from '../../../src/pipeline/stats.js';
import {
  captureDiag,
  type ProcessWarning,
  recordProcessWarnings,
} from '../../support/diag-capture.js';

const messages = captureDiag();

/**
 * Every Outcomes a test made, closed after it: a network failure arms the unreachable clock (a
 * real 30 s timer), whose alert would otherwise land in whatever test file this worker runs
 * 30 s later (seen in CI: a CLI test that records process warnings got two).
 */
const made: Outcomes[] = [];
afterEach(() => {
  for (const o of made.splice(0)) o.close();
});

function outcomes() {
  return track(new Episodes(), 'metrics');
}

function track(episodes: Episodes, signal: 'metrics' | 'traces'): Outcomes {
  const o = new Outcomes(emptyStats(), episodes, {
    slowRetryMillis: 1_000,
    maxBufferedBytes: 100,
    requestTimeoutMillis: 8_000,
    flushTimeoutMillis: 1_000,
    endpoint: 'http://s3.test',
    signal,
  });
  made.push(o);
  return o;
}

function batch(points = 1) {
  return SealedBatch.seal({
    contents: { records: [Buffer.alloc(1)] },
    rawBytes: 1,
    points,
    attributes: {},
    dataTimeMillis: undefined,
  });
}

describe('what a failed attempt is said to have been', () => {
  test("a connection that was never made (the client's connect timeout) is not called the request deadline", () => {
    const o = outcomes();
    // What @smithy/node-http-handler throws when no connection is made in time (a DNS lookup
    // that hangs counts: it is part of connecting), as seen against a resolver that never answers.
    const connect = Object.assign(
      new Error(
        '@smithy/node-http-handler - the request socket did not establish a connection with the server within the configured timeout of 5000 ms.',
      ),
      { name: 'TimeoutError' },
    );
    o.retrying(batch(), { kind: 'retry', reason: 'timeout' }, connect, 0);
    o.flushUnfinished('timeout', { batches: 1, rawBytes: 1 });
    const flush = messages.find((m) => m.text.includes('forceFlush() deadline'))?.text;
    expect(flush).toContain('did not establish a connection with the server within');
    expect(flush).not.toContain('requestTimeoutMillis');
  });

  test('an attempt cut by its own deadline names requestTimeoutMillis', () => {
    const o = outcomes();
    const deadline = Object.assign(new Error('This operation was aborted'), { name: 'AbortError' });
    o.retrying(batch(), { kind: 'retry', reason: 'timeout' }, deadline, 0);
    o.flushUnfinished('timeout', { batches: 1, rawBytes: 1 });
    const flush = messages.find((m) => m.text.includes('forceFlush() deadline'))?.text;
    expect(flush).toContain('no answer within requestTimeoutMillis (8000 ms)');
  });
});

describe('messages speak in the right number', () => {
  const cases = [
    {
      title: 'a batch of one data point rejected for good, one batch left in the spool',
      n: 1,
      dropping: 'dropping the batch of 1 data point (later',
      stays: '; 1 batch stays in the spool for the next run',
    },
    {
      title: 'two of each',
      n: 2,
      dropping: 'dropping the batch of 2 data points',
      stays: '; 2 batches stay in the spool for the next run',
    },
  ];
  for (const { title, n, dropping, stays } of cases) {
    test(title, () => {
      const o = outcomes();
      o.rejected(batch(n), 'rejected', new Error('InvalidArgument'));
      o.gaveUp('timeout', { left: n, dropped: { batches: 0, rawBytes: 0 }, maybeStored: 0 });
      const texts = messages.map((m) => m.text);
      expect(texts.find((t) => t.includes('for good'))).toContain(dropping);
      expect(texts.find((t) => t.includes('in the spool'))).toContain(stays);
    });
  }
});

// A batch whose attempt got no answer (a timeout, a connection lost) may be in S3 after all: the
// shutdown's report said every dropped batch was "not yet stored", and the graceful-shutdown
// trial found one of them stored (answers held 8 s by a proxy).
test('a shutdown that drops batches says how many S3 may hold after all', () => {
  const o = outcomes();
  o.gaveUp('timeout', { left: 0, dropped: { batches: 3, rawBytes: 30 }, maybeStored: 2 });
  o.gaveUp('timeout', { left: 0, dropped: { batches: 1, rawBytes: 10 }, maybeStored: 1 });
  o.gaveUp('timeout', { left: 0, dropped: { batches: 2, rawBytes: 20 }, maybeStored: 0 });
  const said = messages.filter((m) => m.text.includes('dropped')).map((m) => m.text);
  expect(said).toEqual([
    expect.stringContaining(
      'dropped 3 batches (30 bytes uncompressed) not yet stored (S3 may hold 2 of them after all: an attempt got no answer)',
    ),
    expect.stringContaining(
      'dropped 1 batch (10 bytes uncompressed) not yet stored (S3 may hold it after all: an attempt got no answer)',
    ),
    expect.stringMatching(/dropped 2 batches \(20 bytes uncompressed\) not yet stored$/),
  ]);
});

describe('an export the memory bound does not take', () => {
  test('one larger than the whole bound says so and what to change; one that waits for room says that', () => {
    const o = outcomes(); // maxBufferedBytes 100
    o.exportRejectedForRoom(3, 40);
    o.exportRejectedForRoom(2_000, 303_360);
    // Before: both said "nothing left to drop: rejecting exports until uploads catch up", though
    // no upload makes room for an export of 303,360 bytes under a bound of 100.
    expect(messages.map((m) => m.text).filter((t) => t.includes('maxBufferedBytes'))).toEqual([
      expect.stringMatching(/maxBufferedBytes \(100\) reached with nothing left to drop/),
      expect.stringMatching(
        /an export of 303360 bytes \(2000 data points\) is larger than maxBufferedBytes \(100\) and can never be taken: raise maxBufferedBytes/,
      ),
    ]);
    expect(o.stats.pointsDroppedByReason['buffer-full']).toBe(2_003);
  });
});

describe('memory full behind an S3 slower than the exports', () => {
  afterEach(() => vi.useRealTimers());
  const dropping = () =>
    messages.filter((m) => m.text.includes('dropping the oldest batches')).map((m) => m.text);

  test('drops between uploads are one episode; a minute without a drop ends it', () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    const o = outcomes();
    // Every upload stores one batch and the next export drops one: said once, not per upload.
    for (let i = 0; i < 10; i++) {
      o.dropped(batch(), 'buffer-full');
      vi.advanceTimersByTime(2_000);
      o.uploaded(batch(), 1_900);
    }
    expect(dropping()).toHaveLength(1);
    expect(o.stats.pointsDroppedByReason['buffer-full']).toBe(10);
    // Uploads caught up: a minute without a drop, and an upload ends the episode.
    vi.advanceTimersByTime(BUFFER_FULL_QUIET_MILLIS);
    o.uploaded(batch(), 10);
    o.dropped(batch(), 'buffer-full');
    expect(dropping()).toHaveLength(2);
  });
});

describe('a flush or shutdown that returns at once behind a Retry-After', () => {
  test('says whose deadline the wait runs past, in a sentence', () => {
    const o = outcomes();
    o.flushUnfinished('waiting', { batches: 1, rawBytes: 1 });
    o.gaveUp('waiting', { left: 0, dropped: { batches: 1, rawBytes: 1 }, maybeStored: 0 });
    const said = messages.filter((m) => m.text.includes('returns at once')).map((m) => m.text);
    expect(said).toHaveLength(2);
    for (const text of said) {
      expect(text).toContain("until after this call's deadline of 1000 ms");
      expect(text).not.toMatch(/sooner of/);
    }
  });
});

describe('the unreachable alert keeps its time without a failure to check it', () => {
  afterEach(() => vi.useRealTimers());
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), {
    code: 'ECONNREFUSED',
  });
  const network = { kind: 'retry', reason: 'network' } as const;
  const alerted = () =>
    messages.filter((m) => m.text.includes('have failed for')).map((m) => m.text);

  test('at the threshold after the first failure, once; a blip that ends sooner stays quiet', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const o = outcomes();
    const b = batch();
    o.retrying(b, network, refused, 25_000);
    vi.advanceTimersByTime(UNREACHABLE_ALERT_AFTER_MILLIS - 1_000);
    o.uploaded(b, 1); // stored before the threshold: a blip
    vi.advanceTimersByTime(60_000);
    expect(alerted()).toEqual([]);

    o.retrying(b, network, refused, 25_000);
    vi.advanceTimersByTime(UNREACHABLE_ALERT_AFTER_MILLIS - 1);
    expect(alerted()).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(alerted()).toEqual([
      expect.stringMatching(
        /^otel-s3-exporter: uploads to http:\/\/s3\.test have failed for 30 s: connect ECONNREFUSED 127\.0\.0\.1:9\. /,
      ),
    ]);
    o.retrying(b, network, refused, 25_000); // the failure after it: the same episode
    vi.advanceTimersByTime(60_000);
    expect(alerted()).toHaveLength(1);
  });

  test('an answer from the server or shutdown disarms it', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const o = outcomes();
    const b = batch();
    o.retrying(b, network, refused, 1_000);
    o.retrying(b, { kind: 'retry', reason: 'throttled' }, new Error('SlowDown'), 1_000);
    expect(vi.getTimerCount()).toBe(0);
    o.retrying(b, network, refused, 1_000);
    expect(vi.getTimerCount()).toBe(1);
    o.close();
    expect(vi.getTimerCount()).toBe(0);
    o.retrying(b, network, refused, 1_000); // a late report after shutdown arms nothing
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(60_000);
    expect(alerted()).toEqual([]);
  });
});

describe('the unreachable clock of a group is one, as its alert is', () => {
  afterEach(() => vi.useRealTimers());
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), {
    code: 'ECONNREFUSED',
  });
  const network = { kind: 'retry', reason: 'network' } as const;
  const alerted = () =>
    messages.filter((m) => m.text.includes('have failed for')).map((m) => m.text);
  function group() {
    const episodes = new Episodes();
    return [track(episodes, 'traces'), track(episodes, 'metrics')] as const;
  }

  test("one signal's failing uploads are its own episode: another's stored batch does not end it", () => {
    const [traces, metrics] = group();
    const failing = () => messages.filter((m) => m.text.includes('retrying with backoff')).length;
    const server = { kind: 'retry', reason: 'server' } as const;
    const m = batch();
    const error = Object.assign(new Error('InternalError'), { name: 'InternalError' });
    metrics.retrying(m, server, error, 1_000);
    traces.uploaded(batch(), 1); // the traces' prefix works
    metrics.retrying(m, server, error, 1_000); // the same episode, still
    expect(failing()).toBe(1);
    metrics.uploaded(m, 1);
    metrics.retrying(batch(), server, error, 1_000); // a new one
    expect(failing()).toBe(2);
  });

  test("one signal's upload ends the outage for all: a later short one is no alert", () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const [traces, metrics] = group();
    const t = batch();
    const m = batch();
    traces.retrying(t, network, refused, 25_000);
    metrics.retrying(m, network, refused, 25_000);
    vi.advanceTimersByTime(UNREACHABLE_ALERT_AFTER_MILLIS);
    expect(alerted()).toHaveLength(1);
    traces.uploaded(t, 1); // the endpoint answers again: the episode ends
    vi.advanceTimersByTime(5_000);
    metrics.retrying(m, network, refused, 25_000); // a blip of its own, just begun
    vi.advanceTimersByTime(UNREACHABLE_ALERT_AFTER_MILLIS - 1_000);
    metrics.uploaded(m, 1); // over before the threshold
    vi.advanceTimersByTime(60_000);
    expect(alerted()).toHaveLength(1);
  });

  test("an outage another signal's upload ended sooner raises nothing at the threshold", () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const [traces, metrics] = group();
    const t = batch();
    const m = batch();
    traces.retrying(t, network, refused, 1_000);
    metrics.retrying(m, network, refused, 30_000); // its next attempt comes late
    vi.advanceTimersByTime(10_000);
    traces.uploaded(t, 1); // 10 s in, the endpoint answers
    vi.advanceTimersByTime(60_000);
    expect(alerted()).toEqual([]);
  });

  test('no alert after shutdown, from a failure reported late', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const traces = outcomes(); // alone: nothing else of its group is left running
    const t = batch();
    traces.retrying(t, network, refused, 1_000);
    traces.close();
    vi.advanceTimersByTime(UNREACHABLE_ALERT_AFTER_MILLIS + 1_000);
    traces.retrying(t, network, refused, 1_000); // an attempt in flight at shutdown
    expect(alerted()).toEqual([]);
  });
});

describe('a batch lost to an internal error', () => {
  afterEach(() => vi.restoreAllMocks());

  test('is an alert without a logger, once until its signal stores a batch again', () => {
    diag.disable(); // nobody set up logging: a drop must still be heard
    const warnings: ProcessWarning[] = [];
    recordProcessWarnings(warnings);
    const o = outcomes();
    o.dropped(batch(3), 'internal-error', new Error('zstd: out of memory'));
    o.dropped(batch(2), 'internal-error', new Error('zstd: out of memory'));
    expect(warnings).toEqual([
      {
        code: 'OTEL_S3_DATA_DROPPED',
        text: expect.stringContaining('zstd: out of memory'),
      },
    ]);
    expect(warnings[0]?.text).toContain('3 data points');
    expect(o.stats.pointsDroppedByReason['internal-error']).toBe(5);
    o.uploaded(batch(), 1);
    o.dropped(batch(1), 'internal-error', new Error('zstd: out of memory'));
    expect(warnings).toHaveLength(2);
  });
});

describe('failures to encode or append', () => {
  test('each kind is logged once per streak, at most five kinds; an append ends the streak', () => {
    const o = outcomes();
    messages.splice(0);
    for (let i = 0; i < 3; i++) o.encodeFailed(new Error('builders broken'));
    for (let i = 0; i < 8; i++) o.encodeFailed(new Error(`bad item ${i}`));
    const errors = messages.filter((m) => m.level === 'error').map((m) => m.text);
    expect(errors).toEqual(
      ['builders broken', 'bad item 0', 'bad item 1', 'bad item 2', 'bad item 3'].map(
        (m) =>
          `otel-s3-exporter: could not encode metrics: ${m}; the export is answered FAILED (counted in stats().exportsRejected), and this failure is not logged again until an export is appended`,
      ),
    );
    o.appended(0, 1);
    o.appended(0, 1);
    expect(messages.filter((m) => m.level === 'info').map((m) => m.text)).toEqual([
      'otel-s3-exporter: metrics exporter: exports are appended again, after 11 failures to encode or append one (each answered FAILED, counted in stats().exportsRejected)',
    ]);
    o.encodeFailed(new Error('builders broken'));
    expect(messages.filter((m) => m.level === 'error')).toHaveLength(6);
  });
});
