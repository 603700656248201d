import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ExportResultCode } from '@opentelemetry/core';
import { beforeEach, describe, expect, test } from 'vitest';
import { captureDiag } from '../../support/diag-capture.js';
import { FaultyFileSystem } from '../../support/faulty-fs.js';
import { ScriptedS3 } from '../../support/scripted-s3.js';
import { exportTagged, METRICS } from '../../support/signal-driver.js';
import { spoolExporter } from '../../support/spool-exporter.js';
import { tempDir } from '../../support/temp-dir.js';
import { waitFor } from '../../support/wait.js';

const messages = captureDiag();

let dir: string;
beforeEach(() => tempDir('otel-s3-restore-shutdown-', (path) => (dir = path)));

const batchFiles = () => readdirSync(join(dir, 'batches')).filter((n) => n.endsWith('.batch'));

describe('a scan of an earlier run still running at shutdown', () => {
  // Three files left by a run whose S3 hung; the next run's scan reads the first, then its read
  // of the second hangs until after shutdown. What it reads after shutdown must not enter the
  // closed exporter's budget, nor be reported as restored.
  test('takes nothing after shutdown: no batch held, no late report; the files stay', async () => {
    const hung = new ScriptedS3().script([], { kind: 'hang' });
    const first = spoolExporter(hung, dir, { flushTimeoutMillis: 100 });
    for (let i = 0; i < 3; i++) {
      expect((await exportTagged(METRICS, first, 2, i)).code).toBe(ExportResultCode.SUCCESS);
      await waitFor(() => first.stats().spool?.written === i + 1, 5_000, 'the batch on disk');
    }
    await first.shutdown();
    expect(batchFiles()).toHaveLength(3);

    const fs = new FaultyFileSystem()
      .only((path) => path.includes(`${join(dir, 'batches')}/`))
      .hangNext('readFile', 1, 1);
    const second = spoolExporter(hung, dir, { spoolFileSystem: fs, spoolTimeoutMillis: 10_000 });
    try {
      await waitFor(() => fs.hanging > 0, 5_000, 'the second read hangs');
    } finally {
      await second.shutdown();
    }
    messages.length = 0;
    fs.release();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const stats = second.stats();
    expect(messages.map((m) => m.text)).toEqual([]);
    expect(stats.pendingBatches).toBe(0);
    expect(batchFiles()).toHaveLength(3);
  });
});
