import { describe, expect, onTestFinished, test, vi } from 'vitest';
import { SealedBatch } from '../../../src/pipeline/sealed-batch.js';
import type { UploaderOptions } from '../../../src/pipeline/uploader.js';
import type { ObjectWriter, PutAnswer } from '../../../src/s3/object-writer.js';
import { SdkObjectWriter } from '../../../src/s3/sdk-writer.js';
import { captureDiag } from '../../support/diag-capture.js';
import { pipelineParts } from '../../support/pipeline-parts.js';
import { type Behaviour, ScriptedS3 } from '../../support/scripted-s3.js';
import { waitFor } from '../../support/wait.js';

captureDiag();

function setup(s3: ScriptedS3, options: Partial<UploaderOptions> = {}) {
  const { outcomes, budget, uploader, owner } = pipelineParts(s3, { uploader: options });
  /** A batch ready for upload (queued), not yet submitted. */
  const make = (name: string) => {
    const batch = SealedBatch.seal({
      contents: { records: [Buffer.from(name)] },
      rawBytes: name.length,
      points: 1,
      attributes: {},
      dataTimeMillis: undefined,
    });
    budget.admit(batch, name.length, owner);
    batch.startPreparing();
    batch.bodyMade({
      key: `${name}.json`,
      contentType: 'application/json',
      body: Buffer.from(`{"n":"${name}"}\n`),
      sha256: undefined,
      crc32: undefined,
    });
    batch.queue();
    return batch;
  };
  /** A batch ready for upload, submitted. */
  const submit = (name: string) => {
    const batch = make(name);
    uploader.submit(batch);
    return batch;
  };
  return { outcomes, budget, uploader, make, submit };
}

describe('Uploader', () => {
  test('a stored batch settles as uploaded and is counted', async () => {
    const s3 = new ScriptedS3();
    const { submit, outcomes, budget } = setup(s3);
    const batch = submit('a');
    expect(await batch.settled).toBe('uploaded');
    expect(s3.stored.get('a.json')?.toString()).toBe('{"n":"a"}\n');
    expect(outcomes.stats).toMatchObject({ batchesUploaded: 1, uploadAttempts: 1, retries: 0 });
    expect(budget.size).toBe(0);
  });

  test('retries resend the same key and bytes with If-None-Match until stored', async () => {
    const fail: Behaviour = { kind: 'status', status: 500, name: 'InternalError' };
    const s3 = new ScriptedS3().script([fail, fail]);
    const { submit, outcomes } = setup(s3);
    expect(await submit('a').settled).toBe('uploaded');
    expect(s3.attempts.map((a) => [a.key, a.body.toString(), a.ifNoneMatch])).toEqual(
      Array(3).fill(['a.json', '{"n":"a"}\n', '*']),
    );
    expect(outcomes.stats.retries).toBe(2);
    expect(outcomes.stats.uploadFailures).toEqual({ server: 2 });
  });

  test('never more requests in flight than the concurrency', async () => {
    const s3 = new ScriptedS3().script([], { kind: 'delay', millis: 30 });
    let inFlight = 0;
    let most = 0;
    s3.onAttempt = () => {
      inFlight++;
      most = Math.max(most, inFlight);
      setTimeout(() => inFlight--, 30);
    };
    const { submit } = setup(s3, { concurrency: 2 });
    await Promise.all(['a', 'b', 'c', 'd', 'e'].map((n) => submit(n).settled));
    expect(most).toBe(2);
  });

  test('a request past its deadline is aborted and retried, counted as a timeout', async () => {
    const s3 = new ScriptedS3().script([{ kind: 'hang' }]);
    const { submit, outcomes } = setup(s3, { requestTimeoutMillis: 50 });
    expect(await submit('a').settled).toBe('uploaded');
    expect(s3.attempts.map((a) => a.outcome)).toEqual(['aborted', 'ok']);
    expect(outcomes.stats.uploadFailures).toEqual({ timeout: 1 });
  });

  test('a writer that ignores the abort (an S3Client waiting on its credentials) still fails at the deadline, and frees its slot', async () => {
    // The AWS SDK does not watch abortSignal while it resolves credentials: a provider that
    // never answers would hold the attempt, and its upload slot, for good.
    const s3 = new ScriptedS3();
    const real = new SdkObjectWriter(s3.client, 'b', {});
    let calls = 0;
    const writer: ObjectWriter = {
      put: (request) => (++calls === 1 ? new Promise<PutAnswer>(() => {}) : real.put(request)),
      destroy: () => {},
    };
    const { submit, outcomes } = setup(s3, { writer, concurrency: 1, requestTimeoutMillis: 50 });
    const started = performance.now();
    const late = new Promise((r) => setTimeout(() => r('still waiting after 2 s'), 2_000).unref());
    expect(await Promise.race([submit('a').settled, late])).toBe('uploaded');
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(calls).toBe(2);
    expect(outcomes.stats.uploadFailures).toEqual({ timeout: 1 });
  });

  test('a rejection drops the batch through the budget, counted', async () => {
    const s3 = new ScriptedS3().script([{ kind: 'status', status: 413, name: 'EntityTooLarge' }]);
    const { submit, outcomes } = setup(s3);
    expect(await submit('a').settled).toBe('dropped');
    expect(outcomes.stats.pointsDroppedByReason).toEqual({ rejected: 1 });
  });

  test('hurry retries a batch in an ordinary backoff at once (flush does not sit it out)', async () => {
    const s3 = new ScriptedS3().script([{ kind: 'status', status: 500, name: 'InternalError' }]);
    const { submit, uploader } = setup(s3, {
      backoff: { initialDelayMillis: 60_000, maxDelayMillis: 60_000 },
    });
    // The jittered backoff near its 60 s top: only hurry can store the batch within the test.
    vi.spyOn(Math, 'random').mockReturnValue(0.99);
    onTestFinished(() => {
      vi.restoreAllMocks();
    });
    const batch = submit('a');
    await waitFor(() => s3.attempts.length === 1 && batch.state !== 'uploading', 2_000, 'failed');
    uploader.hurry([batch]);
    const late = new Promise((r) => setTimeout(() => r('still waiting after 2 s'), 2_000).unref());
    expect(await Promise.race([batch.settled, late])).toBe('uploaded');
  });

  // In a group the queue is shared: one signal's flush must not wait behind another's backlog.
  test('a batch a flush waits for goes ahead of the queued ones nobody waits for', async () => {
    const s3 = new ScriptedS3().script([], { kind: 'delay', millis: 20 });
    const { submit, uploader } = setup(s3, { concurrency: 1 });
    const backlog = ['a', 'b', 'c', 'd'].map((n) => submit(n));
    const queued = submit('queued-then-hurried');
    uploader.hurry([queued]);
    await Promise.all([...backlog, queued].map((b) => b.settled));
    // 'a' took the one slot before the hurry; the hurried batch comes next.
    expect(s3.attempts.map((a) => a.key).slice(0, 2)).toEqual([
      'a.json',
      'queued-then-hurried.json',
    ]);
  });

  test('a batch hurried before it is queued goes ahead of the backlog when it is', async () => {
    const s3 = new ScriptedS3().script([], { kind: 'delay', millis: 20 });
    const { make, submit, uploader } = setup(s3, { concurrency: 1 });
    const backlog = ['a', 'b', 'c', 'd'].map((n) => submit(n));
    const later = make('hurried-then-queued');
    uploader.hurry([later]);
    uploader.submit(later);
    await Promise.all([...backlog, later].map((b) => b.settled));
    expect(s3.attempts.map((a) => a.key).slice(0, 2)).toEqual([
      'a.json',
      'hurried-then-queued.json',
    ]);
  });

  // A wait the server asked for, or the configuration-fault pace, keeps its time.
  const kept: [string, Behaviour][] = [
    [
      "the server's Retry-After",
      { kind: 'status', status: 503, name: 'SlowDown', headers: { 'retry-after': '60' } },
    ],
    ['a configuration fault', { kind: 'status', status: 403, name: 'AccessDenied' }],
  ];
  for (const [name, behaviour] of kept) {
    test(`hurry leaves a batch waiting for ${name}`, async () => {
      const s3 = new ScriptedS3().script([behaviour]);
      const { submit, uploader, budget } = setup(s3, {
        backoff: { initialDelayMillis: 1, maxDelayMillis: 60_000 },
      });
      const batch = submit('a');
      await waitFor(() => batch.state === 'backing-off', 2_000, 'backing off');
      uploader.hurry([batch]);
      await new Promise((r) => setTimeout(r, 100));
      expect(s3.attempts).toHaveLength(1);
      expect(batch.state).toBe('backing-off');
      budget.drop(batch, 'shutdown');
    });
  }

  // Retry-After is a floor under the jittered backoff: past the server's time, the rest of the
  // wait is an ordinary backoff, which a flush cuts short, and it is not a wait past a deadline.
  test("hurry cuts a backoff longer than the server's Retry-After down to it", async () => {
    const s3 = new ScriptedS3().script([
      { kind: 'status', status: 503, name: 'SlowDown', headers: { 'retry-after': '1' } },
    ]);
    const { submit, uploader } = setup(s3, {
      backoff: { initialDelayMillis: 60_000, maxDelayMillis: 60_000 },
    });
    const random = vi.spyOn(Math, 'random').mockReturnValue(0.5); // a 30 s backoff
    const batch = submit('a');
    await waitFor(() => batch.state === 'backing-off', 2_000, 'backing off');
    random.mockRestore();
    const failedAt = performance.now();
    expect(uploader.waitsPast(batch, failedAt + 5_000)).toBe(false); // the server said 1 s
    expect(uploader.waitsPast(batch, failedAt + 500)).toBe(true);
    uploader.hurry([batch]);
    expect(batch.state).toBe('backing-off'); // the server's second is kept
    expect(await batch.settled).toBe('uploaded');
    const waited = performance.now() - failedAt;
    expect(waited).toBeGreaterThanOrEqual(900);
    expect(waited).toBeLessThan(3_000);
  });

  test('a configuration fault marks the batch blocked and retries it slowly', async () => {
    const s3 = new ScriptedS3().script([], { kind: 'status', status: 403, name: 'AccessDenied' });
    const { submit, budget } = setup(s3, {
      backoff: { initialDelayMillis: 1, maxDelayMillis: 400 },
    });
    const batch = submit('a');
    await waitFor(() => batch.blocked, 2_000, 'blocked');
    expect(batch.state).toBe('backing-off');
    await new Promise((r) => setTimeout(r, 100));
    expect(s3.attempts).toHaveLength(1); // slow: at least maxDelayMillis / 2
    s3.script([], { kind: 'ok' });
    expect(await batch.settled).toBe('uploaded'); // by itself, about maxDelayMillis later
    expect(budget.size).toBe(0);
  });

  test('a 400 to a conditional write is tried once without If-None-Match; if that works, later writes are plain', async () => {
    const s3 = new ScriptedS3().script([{ kind: 'status', status: 400, name: 'InvalidArgument' }]);
    const { submit } = setup(s3);
    expect(await submit('a').settled).toBe('uploaded');
    expect(await submit('b').settled).toBe('uploaded');
    expect(s3.attempts.map((a) => [a.key, a.ifNoneMatch ?? 'none'])).toEqual([
      ['a.json', '*'],
      ['a.json', 'none'],
      ['b.json', 'none'],
    ]);
  });

  test('the same 400 without the header too: conditional writes stay on and the batch is rejected', async () => {
    const bad: Behaviour = { kind: 'status', status: 400, name: 'InvalidArgument' };
    const s3 = new ScriptedS3().script([bad, bad]);
    const { submit } = setup(s3);
    expect(await submit('a').settled).toBe('dropped');
    expect(await submit('b').settled).toBe('uploaded');
    expect(s3.attempts.map((a) => a.ifNoneMatch ?? 'none')).toEqual(['*', 'none', '*']);
  });

  test('a body that arrived damaged is retried with If-None-Match, and later writes keep it', async () => {
    const damaged: Behaviour = { kind: 'status', status: 400, name: 'XAmzContentSHA256Mismatch' };
    const s3 = new ScriptedS3().script([damaged]);
    const { submit, outcomes } = setup(s3);
    expect(await submit('a').settled).toBe('uploaded');
    expect(await submit('b').settled).toBe('uploaded');
    expect(s3.attempts.map((a) => [a.key, a.ifNoneMatch ?? 'none'])).toEqual([
      ['a.json', '*'],
      ['a.json', '*'],
      ['b.json', '*'],
    ]);
    expect(outcomes.stats.uploadFailures).toEqual({ 'damaged-body': 1 });
  });

  test('without conditional writes, a body that arrived damaged is retried, not rejected', async () => {
    const s3 = new ScriptedS3().script([{ kind: 'status', status: 400, name: 'BadDigest' }]);
    const { submit, outcomes } = setup(s3, { conditionalWrites: false });
    expect(await submit('a').settled).toBe('uploaded');
    expect(s3.attempts.map((a) => a.ifNoneMatch ?? 'none')).toEqual(['none', 'none']);
    expect(outcomes.stats.pointsDropped).toBe(0);
  });

  test('a batch dropped while its request is in flight is not counted as stored', async () => {
    const s3 = new ScriptedS3().script([{ kind: 'hang' }]);
    const { submit, budget, outcomes } = setup(s3, { requestTimeoutMillis: 60_000 });
    const batch = submit('a');
    await waitFor(() => s3.attempts.length === 1, 2_000, 'in flight');
    budget.drop(batch, 'shutdown');
    expect(await batch.settled).toBe('dropped');
    await new Promise((r) => setTimeout(r, 20));
    expect(s3.attempts[0]?.outcome).toBe('aborted');
    expect(outcomes.stats.batchesUploaded).toBe(0);
    expect(outcomes.stats.uploadFailures).toEqual({});
  });
});
