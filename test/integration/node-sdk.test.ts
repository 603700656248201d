import type { S3Client } from '@aws-sdk/client-s3';
import { expect, onTestFinished, test } from 'vitest';
import { dataPointRows } from '../../src/reader.js';
import { spawnTs } from '../support/child.js';
import type { FaultProxy } from '../support/fault-proxy.js';
import {
  decodeStored,
  describeS3,
  listAndFetch,
  s3Environment,
  s3Server,
  withS3,
} from '../support/s3.js';

describeS3('examples/node-sdk.ts: the exporter inside NodeSDK', () => {
  let client: S3Client;
  let bucket: string;
  let proxy: FaultProxy;
  withS3('node-sdk', { kind: 'pass' }, (s) => ({ client, bucket, proxy } = s));

  const env = (endpoint: string, prefix: string) => ({
    ...s3Environment(endpoint),
    OTEL_SERVICE_NAME: 'orders',
    OTEL_EXPORTER_S3_BUCKET: bucket,
    OTEL_EXPORTER_S3_PREFIX: prefix,
    OTEL_EXPORTER_S3_FLUSH_TIMEOUT: '1500',
    OTEL_EXPORTER_S3_TIMEOUT: '60000',
    OTEL_EXPORTER_S3_MAX_BATCH_AGE: '100',
    OTEL_METRIC_EXPORT_INTERVAL: '200',
    AWS_REGION: s3Server?.region,
  });

  test('with S3 healthy, SIGTERM stores the metrics, spans and log records, configured from the environment alone', async () => {
    const child = spawnTs('examples/node-sdk.ts', env(s3Server?.endpoint ?? '', 'sdk-healthy'));
    await child.waitForJson<{ started?: boolean }>((v) => v.started === true);
    await new Promise((r) => setTimeout(r, 700));
    child.process.kill('SIGTERM');
    expect((await child.exited).code, child.stderr()).toBe(0);
    const objects = await listAndFetch(client, bucket, 'sdk-healthy/');
    const of = (word: string) => objects.filter((o) => o.key.includes(`/${word}_`));
    const rows = of('metrics').flatMap((o) => dataPointRows(decodeStored(o)));
    expect(rows.some((r) => r.metric === 'orders.placed' && (r.value ?? 0) > 0)).toBe(true);
    expect(rows.every((r) => r.resource['service.name'] === 'orders')).toBe(true);
    // The spans and the log records, each in objects of their own beside the metrics.
    const text = (word: string) => of(word).map((o) => JSON.stringify(decodeStored(o)));
    expect(text('traces').some((t) => t.includes('"name":"place order"'))).toBe(true);
    expect(text('logs').some((t) => t.includes('"stringValue":"order placed"'))).toBe(true);
    // Logged in beforeShutdown, after the last order: stored all the same.
    expect(text('logs').some((t) => t.includes('"stringValue":"shutting down"'))).toBe(true);
    for (const t of [...text('traces'), ...text('logs')]) expect(t).toContain('"orders"');

    // Each order is one span, one log record, one count and one histogram value: after the
    // shutdown's last collection, all four totals agree (nothing recorded was left behind).
    const count = (word: string, field: string) =>
      text(word).reduce((n, t) => n + (t.match(new RegExp(field, 'g'))?.length ?? 0), 0);
    const spans = count('traces', '"name":"place order"');
    const logRecords = count('logs', '"stringValue":"order placed"');
    const last = (metric: string) =>
      rows
        .filter((r) => r.metric === metric)
        .sort((a, b) => a.time.localeCompare(b.time))
        .at(-1);
    expect(spans).toBeGreaterThan(0);
    expect([logRecords, last('orders.placed')?.value, last('orders.value')?.count]).toEqual([
      spans,
      spans,
      spans,
    ]);
  });

  test('with S3 black-holed, sdk.shutdown() (no timeout of its own) settles within 2 x flushTimeoutMillis + 1 s', async () => {
    await proxy.set({ kind: 'blackhole' });
    const child = spawnTs('examples/node-sdk.ts', env(proxy.endpoint, 'sdk-blackhole'));
    await child.waitForJson<{ started?: boolean }>((v) => v.started === true);
    // Let a batch get stuck in the black hole first (the startup check's PUT is not one).
    const deadline = performance.now() + 10_000;
    while (proxy.uploadAttempts().length === 0 && performance.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    expect(proxy.uploadAttempts().length).toBeGreaterThan(0);
    const signalled = performance.now();
    child.process.kill('SIGTERM');
    const exit = await child.exited;
    const millis = exit.at - signalled;
    console.log(
      `[measure] NodeSDK, S3 black-holed, flushTimeoutMillis 1500: SIGTERM to exit ${millis.toFixed(0)} ms`,
    );
    expect(exit.code, child.stderr()).toBe(0);
    expect(millis).toBeLessThan(2 * 1500 + 1000);
  });

  test('with S3 black-holed, a second SIGTERM during the shutdown exits 1 at once and says so on stderr', async () => {
    await proxy.set({ kind: 'blackhole' });
    const child = spawnTs('examples/node-sdk.ts', env(proxy.endpoint, 'sdk-second-signal'));
    onTestFinished(() => {
      if (child.process.exitCode === null && child.process.signalCode === null)
        child.process.kill('SIGKILL');
    });
    await child.waitForJson<{ started?: boolean }>((v) => v.started === true);
    const deadline = performance.now() + 10_000;
    while (proxy.uploadAttempts().length === 0 && performance.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    child.process.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    const again = performance.now();
    child.process.kill('SIGTERM');
    const exit = await child.exited;
    expect(exit.code, child.stderr()).toBe(1);
    // At once: well before the exporters' own deadlines (2 x 1500 ms) would have ended it.
    expect(exit.at - again).toBeLessThan(1_000);
    // The batches stuck in the black hole are lost: said once, before the process is gone.
    const said = child.stderr().match(/OTEL_S3_SHUTDOWN_TIMEOUT/g) ?? [];
    expect(said, child.stderr()).toHaveLength(1);
    expect(child.stderr()).toMatch(
      /SIGTERM again during the shutdown: exiting now with code 1, without waiting for the telemetry still being flushed/,
    );
    expect(child.stderr()).not.toMatch(/\n\s+at /);
  });
});
