import { UUID } from 'uuidv7';
import { expect } from 'vitest';
import { defaultKeyTemplate } from '../../src/layout/formats.js';
import { KeyTemplate, type KeyTemplateOptions } from '../../src/layout/key-template.js';

/** A layout to write keys in, as the exporter's options name it. */
export interface WriteLayout {
  prefix: string;
  keyTemplate?: string;
  filePrefix?: string;
  timeZone?: KeyTemplateOptions['timeZone'];
}

let sequence = 0;

/**
 * A key as the exporter renders it: a UUIDv7 made at `sealedAt`, filed under the partition of
 * `partition` (the batch's oldest data point with partitionTime 'data'; the seal time by default).
 */
export function renderKey(
  layout: WriteLayout,
  sealedAt: Date,
  extension: string,
  extra: { partition?: Date; attributes?: Record<string, string> } = {},
): string {
  const template = new KeyTemplate(
    layout.keyTemplate ?? defaultKeyTemplate('otlp-json', 'metrics'),
    {
      prefix: layout.prefix,
      filePrefix: layout.filePrefix ?? '',
      timeZone: layout.timeZone ?? 'UTC',
    },
  );
  const id = UUID.fromFieldsV7(sealedAt.getTime(), ++sequence & 0xfff, 0, sequence).toString();
  return template.render({
    time: extra.partition ?? sealedAt,
    attributes: extra.attributes ?? {},
    extension,
    id,
  });
}

/**
 * Runs `fn` with the process in time zone `zone` (Node reads TZ again when it changes), checking
 * that it took effect, and restores the zone after.
 */
export async function inTimeZone<T>(zone: string, fn: () => Promise<T>): Promise<T> {
  const before = process.env.TZ;
  process.env.TZ = zone;
  try {
    expect(new Date().getTimezoneOffset()).not.toBe(0);
    return await fn();
  } finally {
    if (before === undefined) delete process.env.TZ;
    else process.env.TZ = before;
  }
}
