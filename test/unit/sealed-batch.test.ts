import { describe, expect, test } from 'vitest';
import { SealedBatch } from '../../src/pipeline/sealed-batch.js';
import type { SpoolEntry } from '../../src/spool/spool.js';

const contents = () => ({
  records: [Buffer.from('a'), Buffer.from('b')],
  rawBytes: 30,
  points: 7,
  attributes: {},
  dataTimeMillis: undefined,
});
const body = {
  key: 'k.json',
  contentType: 'application/json',
  body: Buffer.from('{}'),
  sha256: undefined,
  crc32: undefined,
};
const entry: SpoolEntry = {
  name: 'x.batch',
  fileBytes: 10,
  meta: { key: 'p/k.json', contentType: 'application/json', points: 3, rawBytes: 9, sealedAt: 5 },
};

/** A batch moved to `queued` through the usual path. */
function queued(): SealedBatch {
  const batch = SealedBatch.seal(contents());
  batch.startPreparing();
  batch.bodyMade(body);
  batch.queue();
  return batch;
}

describe('SealedBatch', () => {
  test('sealed now: unprepared, holding its records, with a UUIDv7 made at seal time', () => {
    const before = Date.now();
    const batch = SealedBatch.seal(contents());
    expect(batch.state).toBe('unprepared');
    expect(batch.isIdle).toBe(true);
    expect(batch.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/);
    expect(batch.sealedAt.getTime()).toBeGreaterThanOrEqual(before);
    expect(batch.restored).toBe(false);
  });

  test('restored from the spool: paged out, named, on disk, its bytes not in memory', () => {
    const batch = SealedBatch.restore(entry);
    expect(batch).toMatchObject({ state: 'paged-out', key: 'p/k.json', points: 3, rawBytes: 9 });
    expect(batch.restored).toBe(true);
    expect(batch.spool).toBe(entry);
    expect(batch.body).toBeUndefined();
    expect(batch.sealedAt.getTime()).toBe(5);
  });

  test('the usual path: records handed over once, body made, queued, uploading, settled', async () => {
    const batch = SealedBatch.seal(contents());
    const records = batch.startPreparing();
    expect(records).toHaveLength(2);
    expect(batch.startPreparing()).toBeUndefined(); // handed over once
    expect(batch.isIdle).toBe(false);
    expect(batch.bodyMade(body)).toBe(true);
    expect(batch.key).toBe('k.json');
    expect(batch.queue()).toBe(true);
    const controller = new AbortController();
    expect(batch.startUpload(controller)).toBe(true);
    expect(batch.attempts).toBe(1);
    expect(batch.settle('uploaded')).toBe(true);
    expect(await batch.settled).toBe('uploaded');
    expect(batch.body).toBeUndefined();
    expect(batch.settle('dropped')).toBe(false); // once
  });

  test('every transition refuses to start from another state (the batch moved on meanwhile)', () => {
    const batch = SealedBatch.seal(contents());
    expect(batch.bodyMade(body)).toBe(false);
    expect(batch.queue()).toBe(false);
    expect(batch.startUpload(new AbortController())).toBe(false);
    expect(batch.backOff(1, () => {})).toBe(false);
    expect(batch.pageOut()).toBe(false);
    expect(batch.startPageIn()).toBe(false);
    expect(batch.pagedIn(Buffer.from('x'))).toBe(false);
    expect(batch.state).toBe('unprepared');
    batch.settle('dropped');
    expect(batch.startPreparing()).toBeUndefined();
    expect(batch.state).toBe('settled');
  });

  test('settling stops a pending retry and aborts the request in flight', async () => {
    const waiting = queued();
    waiting.startUpload(new AbortController());
    let retried = false;
    expect(waiting.backOff(20, () => (retried = true))).toBe(true);
    expect(waiting.isIdle).toBe(true);
    waiting.settle('dropped');
    await new Promise((r) => setTimeout(r, 40));
    expect(retried).toBe(false);

    const inFlight = queued();
    const controller = new AbortController();
    inFlight.startUpload(controller);
    inFlight.settle('dropped', 'why');
    expect(controller.signal.aborted).toBe(true);
    expect(controller.signal.reason).toBe('why');
  });

  test('a retry timer that fires queues the batch again', async () => {
    const batch = queued();
    batch.startUpload(new AbortController());
    const fired = new Promise<void>((resolve) => batch.backOff(5, () => resolve()));
    await fired;
    expect(batch.queue()).toBe(true);
    expect(batch.state).toBe('queued');
  });

  test('only a batch with a durable copy pages out, and only while idle; paging in brings it back', () => {
    const batch = queued();
    expect(batch.pageOut()).toBe(false); // no spool copy
    batch.spool = entry;
    expect(batch.pageOut()).toBe(true);
    expect(batch.body).toBeUndefined();
    expect(batch.startPageIn()).toBe(true);
    expect(batch.pageInFailed()).toBe(true); // a read that may work later
    expect(batch.state).toBe('paged-out');
    batch.startPageIn();
    expect(batch.pagedIn(Buffer.from('again'))).toBe(true);
    expect(batch.queue()).toBe(true);
    expect(batch.body?.toString()).toBe('again');
    const uploading = queued();
    uploading.spool = entry;
    uploading.startUpload(new AbortController());
    expect(uploading.pageOut()).toBe(false); // busy
  });
});
