import { describe, expect, test } from 'vitest';
import { SealedBatch } from '../../../src/pipeline/sealed-batch.js';
import type { SpoolEntry } from '../../../src/spool/spool.js';

const contents = () => ({
  contents: { records: [Buffer.from('a'), Buffer.from('b')] },
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
    const after = Date.now();
    expect(batch.state).toBe('unprepared');
    expect(batch.isIdle).toBe(true);
    expect(batch.startPreparing()).toEqual(contents().contents);
    expect(batch.restored).toBe(false);
    // RFC 9562: version 7, variant 10, and the first 48 bits are the Unix time in milliseconds.
    expect(batch.id).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    const idMillis = Number.parseInt(batch.id.replaceAll('-', '').slice(0, 12), 16);
    expect(idMillis).toBeGreaterThanOrEqual(before);
    expect(idMillis).toBeLessThanOrEqual(after);
    expect(batch.sealedAt.getTime()).toBeGreaterThanOrEqual(before);
    expect(batch.sealedAt.getTime()).toBeLessThanOrEqual(after);
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
    const handed = batch.startPreparing();
    expect(handed?.records).toHaveLength(2);
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
    expect(batch.spooled(entry)).toBe(true);
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
    uploading.spooled(entry);
    uploading.startUpload(new AbortController());
    expect(uploading.pageOut()).toBe(false); // busy
  });

  test('its fields change only through its transitions: no setter, for the compiler or at run time', () => {
    const batch = SealedBatch.seal(contents());
    expect(() => {
      // @ts-expect-error read only: the key is fixed by bodyMade()
      batch.key = 'other';
    }).toThrow(TypeError);
    expect(() => {
      // @ts-expect-error read only: the spool copy is recorded by spooled()
      batch.spool = entry;
    }).toThrow(TypeError);
    expect(() => {
      // @ts-expect-error read only: markBlocked() sets it
      batch.blocked = true;
    }).toThrow(TypeError);
    expect(() => {
      // @ts-expect-error read only: startUpload() counts attempts
      batch.attempts = 3;
    }).toThrow(TypeError);
    expect([batch.key, batch.spool, batch.blocked, batch.attempts]).toEqual([
      '',
      undefined,
      false,
      0,
    ]);
  });

  test('a spool copy is recorded only for a body in memory of a batch that has not settled', () => {
    const unprepared = SealedBatch.seal(contents());
    expect(unprepared.spooled(entry)).toBe(false); // no body to be a copy of
    expect(unprepared.spool).toBeUndefined();
    const dropped = queued();
    dropped.settle('dropped');
    expect(dropped.spooled(entry)).toBe(false); // its file would replay a batch counted as lost
    const batch = queued();
    expect(batch.spooled(entry)).toBe(true);
    expect(batch.spool).toBe(entry);
  });

  test('a spool copy is forgotten when its file goes, but not while it is the only copy', () => {
    const batch = queued();
    batch.spooled(entry);
    batch.pageOut();
    expect(batch.unspool()).toBeUndefined(); // paged out: dropping it comes first
    expect(batch.spool).toBe(entry);
    batch.startPageIn();
    expect(batch.unspool()).toBe(entry); // e.g. quarantined after a failed read
    expect(batch.spool).toBeUndefined();
    const settled = queued();
    settled.spooled(entry);
    settled.settle('uploaded');
    expect(settled.unspool()).toBe(entry); // its file is deleted once it is stored
  });

  test('blocked only while backing off after an attempt, and cleared by the next attempt', () => {
    const batch = queued();
    expect(batch.markBlocked()).toBe(false); // no attempt yet
    batch.startUpload(new AbortController());
    expect(batch.markBlocked()).toBe(false); // still in flight
    batch.backOff(60_000, () => {});
    expect(batch.markBlocked()).toBe(true);
    expect(batch.blocked).toBe(true);
    batch.queue();
    batch.startUpload(new AbortController());
    expect(batch.blocked).toBe(false);
    expect(batch.attempts).toBe(2);
    batch.settle('dropped');
    expect(batch.markBlocked()).toBe(false);
  });
});
