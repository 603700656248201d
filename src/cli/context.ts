import type { Writable } from 'node:stream';
import type { ListMetricObjectsOptions } from '../reader/read-options.js';
import type { CsvFields } from './format.js';
import type { LineWriter } from './output.js';
import type { Settings } from './settings.js';
import { printable } from './terminal-text.js';

/** What every command gets: its settings, its output, and where to report. */
export interface CommandContext {
  settings: Settings;
  out: LineWriter;
  stderr: Writable;
  stdoutIsTTY: boolean;
  /** The terminal's width in cells when stdout is a terminal that reports it (terminalColumns). */
  stdoutColumns?: number | undefined;
  stderrIsTTY: boolean;
  /** Aborted on Ctrl-C and when the output goes away. */
  signal: AbortSignal;
  /** The environment the settings came from (`otel-s3 check` reads the exporter's variables). */
  env: Readonly<Record<string, string | undefined>>;
}

/** A line on stderr, prefixed like every message of the tool, with control characters escaped. */
export function note(ctx: Pick<CommandContext, 'stderr'>, line: string): void {
  ctx.stderr.write(`otel-s3: ${printable(line)}\n`);
}

/** A closing line on stderr, after what is queued for stdout (so a terminal shows it last). */
export async function finalNote(ctx: CommandContext, line: string): Promise<void> {
  await ctx.out.flush();
  note(ctx, line);
}

/** The note on the CSV fields written with a leading `'`, unless the output went away. */
export async function escapedNote(ctx: CommandContext, fields: CsvFields): Promise<void> {
  const line = fields.note();
  if (line !== undefined && !ctx.out.closed) await finalNote(ctx, line);
}

/** The reader API's options for these settings. */
export function readerOptions(ctx: CommandContext): ListMetricObjectsOptions {
  const { source, prefix, layout, from, to } = ctx.settings;
  const range = { prefix, ...layout, from, to, signal: ctx.signal };
  if (source.kind === 'dir') return { ...range, dir: source.dir };
  return {
    ...range,
    bucket: source.bucket,
    endpoint: source.endpoint,
    region: source.region,
    forcePathStyle: source.forcePathStyle,
  };
}

/** ` since 2026-11-30T04:00:00.000Z before …` after what was read, or nothing without a range. */
export function rangeSuffix(settings: Settings): string {
  const range = describeRange(settings);
  return range === '' ? '' : ` ${range}`;
}

/** `since 2026-11-30T04:00:00.000Z until 2026-11-30T05:00:00.000Z`, for messages. */
export function describeRange(settings: Settings): string {
  const parts: string[] = [];
  if (settings.from !== undefined) parts.push(`since ${settings.from.toISOString()}`);
  if (settings.to !== undefined) parts.push(`before ${settings.to.toISOString()}`);
  return parts.join(' ');
}
