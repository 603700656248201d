import { diag } from '@opentelemetry/api';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { Episodes } from '../../../src/base/log.js';
import { emptySpoolStats } from '../../../src/pipeline/stats.js';
import { KeeperReports, LISTING } from '../../../src/spool/keeper-reports.js';
import {
  captureDiag,
  type ProcessWarning,
  recordProcessWarnings,
} from '../../support/diag-capture.js';

const messages = captureDiag();

/** The spools of one S3Exporters group: a directory each, one Episodes for all. */
function group() {
  const episodes = new Episodes();
  const of = (dir: string) =>
    new KeeperReports(emptySpoolStats(), episodes, {
      dir,
      maxSpoolBytes: 1_000,
      diskTimeoutMillis: 1_000,
      retryEveryMillis: 1_000,
    });
  return [of('/spool'), of('/spool/traces')] as const;
}

describe('the spools of a group have episodes of their own', () => {
  const warnings: ProcessWarning[] = [];
  beforeEach(() => {
    diag.disable();
    warnings.length = 0;
    recordProcessWarnings(warnings);
  });
  afterEach(() => vi.restoreAllMocks());

  test("one directory's write failure is no other's, nor its recovery", () => {
    const [metrics, traces] = group();
    const eio = Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' });
    metrics.writeFailed('EIO', eio);
    traces.writeFailed('EIO', eio); // another disk, maybe: its own alert
    expect(warnings.map((w) => w.text)).toEqual([
      expect.stringContaining('spool /spool: '),
      expect.stringContaining('spool /spool/traces: '),
    ]);
    traces.written(); // its writes work again: not the metrics spool's
    metrics.writeFailed('EIO', eio); // the same episode, still open
    expect(warnings).toHaveLength(2);

    metrics.evicted();
    traces.evicted();
    expect(warnings.filter((w) => w.code === 'OTEL_S3_SPOOL_FULL')).toHaveLength(2);
  });

  test('the recovery line names the directory that recovered', () => {
    const quiet = () => {};
    const info = (text: string) => messages.push({ level: 'info', text });
    diag.setLogger(
      { error: quiet, warn: quiet, info, debug: quiet, verbose: quiet },
      { suppressOverrideMessage: true },
    );
    const [metrics, traces] = group();
    metrics.writeFailed('EIO', new Error('EIO'));
    traces.written();
    expect(messages.filter((m) => m.text.includes('writes work again'))).toEqual([]);
  });
});

describe('spool episodes end, so the next one is heard', () => {
  const warnings: ProcessWarning[] = [];
  beforeEach(() => {
    warnings.length = 0;
    recordProcessWarnings(warnings);
  });
  afterEach(() => vi.restoreAllMocks());
  /** The warnings logged (diag) or raised (a process warning: an alert). */
  const heard = (part: string) =>
    [...messages.map((m) => m.text), ...warnings.map((w) => w.text)].filter((t) =>
      t.includes(part),
    );
  const eio = Object.assign(new Error('EIO: i/o error, read'), { code: 'EIO' });

  test('a full spool: a write that fits without evicting ends it; full again warns again', () => {
    const [metrics] = group();
    metrics.evicted();
    metrics.evicted(); // the same episode
    metrics.fitted();
    metrics.evicted();
    expect(heard('reached maxSpoolBytes')).toHaveLength(2);
  });

  test('unreadable files: over once every file that failed has been read, not at the first read', () => {
    const [metrics] = group();
    metrics.readFailed('a', eio);
    metrics.readFailed('b', eio);
    metrics.read('a'); // b still fails: the same episode
    metrics.readFailed('b', eio);
    expect(heard('could not be read')).toHaveLength(1);
    metrics.read('b');
    metrics.readFailed('c', eio); // a new episode
    expect(heard('could not be read')).toHaveLength(2);
  });

  test('a listing that failed, then worked: the next failure is heard', () => {
    const [metrics] = group();
    metrics.listFailed(eio);
    metrics.read(LISTING);
    metrics.listFailed(eio);
    expect(heard('could not be listed')).toHaveLength(2);
  });
});
