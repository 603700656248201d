import { describe, expect, test } from 'vitest';
import { isError, LakeDay, type Trace } from '../../../bench/lib/lake-day.js';

/**
 * The lookup benchmark's day (bench/lib/lake-day.ts) has the shape its results claim: traces of
 * 5–30 spans that form one tree each, spread over the services' instances, log records in their
 * trace's context, about 1 % of spans in error, each trace within its minute; the same seed makes
 * the same day.
 */

const START = Date.UTC(2026, 11, 3);
const MINUTES = 20;
const shape = {
  startMillis: START,
  hours: 1,
  services: 20,
  instancesPerService: 2,
  tracesPerSecond: 1,
  seed: 33,
};
const nanos = ([s, n]: readonly [number, number]) => BigInt(s) * 1_000_000_000n + BigInt(n);

describe('the lookup benchmark day', () => {
  const day = new LakeDay(shape);
  const minutes: Trace[][] = Array.from({ length: MINUTES }, (_, m) => day.tracesOfMinute(m));
  const traces = minutes.flat();
  const spans = traces.flatMap((t) => t.spans);

  test('traces of 5 to 30 spans, each one tree with one root, ids its own', () => {
    // At 1 trace/s on a diurnal curve between 0.4× and 1.6×.
    expect(traces.length).toBeGreaterThan(0.4 * 60 * MINUTES);
    expect(traces.length).toBeLessThan(1.6 * 60 * MINUTES);
    const bad: string[] = [];
    for (const t of traces) {
      const ids = new Set(t.spans.map((s) => s.span.spanContext().spanId));
      const roots = t.spans.filter((s) => s.span.parentSpanContext === undefined).length;
      if (t.spans.length < 5 || t.spans.length > 30)
        bad.push(`${t.traceId}: ${t.spans.length} spans`);
      if (ids.size !== t.spans.length) bad.push(`${t.traceId}: a span id twice`);
      if (roots !== 1) bad.push(`${t.traceId}: ${roots} roots`);
      for (const { span } of t.spans) {
        const parent = span.parentSpanContext?.spanId;
        if (span.spanContext().traceId !== t.traceId) bad.push(`${t.traceId}: another trace id`);
        if (parent !== undefined && !ids.has(parent)) bad.push(`${t.traceId}: no parent ${parent}`);
        if (nanos(span.endTime) < nanos(span.startTime)) bad.push(`${t.traceId}: ends first`);
      }
    }
    expect(bad).toEqual([]);
    expect(new Set(traces.map((t) => t.traceId)).size).toBe(traces.length);
  });

  test('each trace within its minute; server, client and database spans; every instance busy', () => {
    const outside: string[] = [];
    minutes.forEach((list, m) => {
      const from = BigInt(START + m * 60_000) * 1_000_000n;
      const to = from + 60_000_000_000n;
      for (const t of list) {
        for (const { span } of t.spans) {
          if (nanos(span.startTime) < from || nanos(span.endTime) >= to) outside.push(t.traceId);
        }
        for (const { record } of t.logs) {
          if (nanos(record.hrTime) < from || nanos(record.hrTime) >= to) outside.push(t.traceId);
        }
      }
    });
    expect(outside).toEqual([]);
    expect([...new Set(spans.map((s) => s.span.kind))].sort()).toEqual([1, 2]); // SERVER, CLIENT
    expect(spans.some((s) => 'db.system.name' in s.span.attributes)).toBe(true);
    expect(new Set(spans.map((s) => s.instance)).size).toBe(day.instances.length);
    const foreign = spans.filter((s) => {
      const instance = day.instances[s.instance];
      return (
        s.span.resource !== instance?.resource ||
        s.span.resource.attributes['service.name'] !== instance.service
      );
    });
    expect(foreign).toEqual([]);
  });

  test('about 1 % of spans in error; log records in their trace, under one of its spans', () => {
    const errors = spans.filter((s) => isError(s.span)).length / spans.length;
    expect(errors).toBeGreaterThan(0.003);
    expect(errors).toBeLessThan(0.03);
    const bad: string[] = [];
    for (const t of traces) {
      const ids = new Set(t.spans.map((s) => s.span.spanContext().spanId));
      if (t.logs.length === 0) bad.push(`${t.traceId}: no log record`);
      for (const { record } of t.logs) {
        if (record.spanContext?.traceId !== t.traceId) bad.push(`${t.traceId}: another trace`);
        if (!ids.has(record.spanContext?.spanId as string)) bad.push(`${t.traceId}: no such span`);
      }
    }
    expect(bad).toEqual([]);
  });

  test('the same seed makes the same day; another seed another', () => {
    const again = new LakeDay(shape).tracesOfMinute(0);
    const first = minutes[0] as Trace[];
    expect(again.map((t) => t.traceId)).toEqual(first.map((t) => t.traceId));
    expect(new LakeDay({ ...shape, seed: 34 }).tracesOfMinute(0)[0]?.traceId).not.toBe(
      first[0]?.traceId,
    );
  });

  test('too many or too few services: a clear error', () => {
    expect(() => new LakeDay({ ...shape, services: 21 })).toThrow(
      'services: 21 is not allowed: between 4 and 20',
    );
  });
});
