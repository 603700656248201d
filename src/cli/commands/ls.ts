import { formatBytes } from '../../base/byte-size.js';
import { FORMAT_ROWS, type SignalName } from '../../layout/formats.js';
import { listObjectsOf } from '../../reader/read-metrics.js';
import { type CommandContext, describeRange, finalNote, readerOptions } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { formatInteger, plural } from '../format.js';
import { closingNotes } from '../listing-notes.js';
import { jsonLine, printable } from '../terminal-text.js';

export interface LsOptions {
  format: 'text' | 'jsonl';
  /** Whose objects to list. */
  signals: readonly SignalName[];
}

/**
 * The objects a compaction output replaces are left out of the listing (a reader never reads
 * them), though they may still be stored (the OTLP ones are kept): the totals say how many.
 */
const replacedNote = (replaced: number): string =>
  replaced === 0
    ? ''
    : `; not listed: ${plural(replaced, 'object')} that a compaction output replaces`;

/** `otel-s3 ls`: the objects in the range with their times and sizes, without downloading them
 * (but the footers of compaction outputs, which say what each replaces). */
export async function ls(ctx: CommandContext, options: LsOptions): Promise<number> {
  const { out } = ctx;
  const stream = listObjectsOf(options.signals, readerOptions(ctx));
  for await (const object of stream) {
    const time = object.time.toISOString();
    if (options.format === 'jsonl') {
      const { key, size, signal } = object;
      const { format, compression } = object.encoding;
      // A Parquet file compresses inside, with a codec its name does not tell (stats reads it
      // from the footer): null, not the 'none' of its outside, which would contradict stats.
      const inside = FORMAT_ROWS[format].compressedInside;
      await out.line(
        jsonLine({ time, size, key, signal, format, compression: inside ? null : compression }),
      );
    } else {
      // Exact bytes, like `aws s3 ls`, so scripts can add them up.
      await out.line(`${time}  ${String(object.size).padStart(12)}  ${printable(object.key)}`);
    }
    if (out.closed) break;
  }
  // The output went away (`| head`, a full disk): what was listed so far is no total of the
  // prefix, and no note of it is said; the caller exits 0, or fails with the write's error.
  if (out.closed) return EXIT.ok;
  const { stats } = stream;
  if (options.format === 'text') {
    const range = describeRange(ctx.settings);
    await finalNote(
      ctx,
      `${plural(stats.objects, 'object')}, ${formatBytes(stats.bytes)} (${formatInteger(stats.bytes)} bytes) in ${ctx.settings.where}${range === '' ? '' : ` ${range}`}${replacedNote(stats.objectsReplaced)}`,
    );
  }
  return (await closingNotes(ctx, stats, options.signals)) ?? EXIT.ok;
}
