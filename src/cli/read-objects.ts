import { ZstdUnavailableError } from '../compression/zstd-engine.js';
import type { SignalName } from '../layout/formats.js';
import { ObjectDecodeError } from '../reader/decode-object.js';
import { ObjectGoneError } from '../reader/errors.js';
import { ObjectTooLargeError } from '../reader/read-limits.js';
import {
  listObjectsOf,
  type ReadStats,
  readObjectsOf,
  type StoredObject,
  type UnreadableObject,
} from '../reader/read-metrics.js';
import { describeError } from '../s3/errors.js';
import { type CommandContext, finalNote, readerOptions } from './context.js';
import { EXIT } from './exit-codes.js';
import { plural } from './format.js';
import { closingNotes } from './listing-notes.js';
import { noProgress, type Progress, progressBar } from './progress.js';
import { SETTINGS } from './setting-sources.js';
import { printable } from './terminal-text.js';

/**
 * Reads every object in the range and hands it to `each`, in key order. Unreadable objects are
 * reported on stderr as they come and skipped; returns EXIT.unreadable if there were any, and
 * EXIT.nothingReadable when there was nothing to read (see closingNotes).
 * `summaryOnly` says the command prints only at the end, so a bar on the terminal is welcome
 * even when stdout is that terminal too. `signals`: whose objects to read (metrics' by default);
 * `traceId`: that trace's spans and log records only (ReadObjectsOptions.traceId).
 */
export async function readObjects(
  ctx: CommandContext,
  summaryOnly: boolean,
  each: (object: StoredObject) => Promise<void>,
  signals: readonly SignalName[] = ['metrics'],
  traceId?: string,
): Promise<{ code: number; stats: Readonly<ReadStats> }> {
  const showBar = ctx.settings.progress && ctx.stderrIsTTY && (summaryOnly || !ctx.stdoutIsTTY);
  const progress: Progress = showBar ? progressBar(ctx.stderr) : noProgress(ctx.stderr);
  const options = readerOptions(ctx);
  let stream: ReturnType<typeof readObjectsOf> | undefined;
  let zstdMissingSaid = false;
  try {
    if (showBar) {
      // A listing pass first, so the bar has a total: one request per 1000 objects.
      let objects = 0;
      let bytes = 0;
      for await (const info of listObjectsOf(signals, options)) {
        objects++;
        bytes += info.size;
      }
      if (objects > 0) progress.start(objects, bytes);
    }
    stream = readObjectsOf(signals, {
      ...options,
      ...ctx.settings.limits,
      concurrency: ctx.settings.concurrency,
      ...(traceId === undefined ? {} : { traceId }),
      onError(problem) {
        progress.advance(problem.size);
        const cause = problem.error instanceof ObjectDecodeError ? problem.error.cause : undefined;
        if (cause instanceof ZstdUnavailableError) {
          // The same for every .zst object: say it once, not once per object.
          if (!zstdMissingSaid) {
            progress.log(
              `otel-s3: cannot read .zst objects, skipping them: ${printable(cause.message)}`,
            );
          }
          zstdMissingSaid = true;
          return;
        }
        progress.log(`otel-s3: ${printable(describeUnreadable(problem))}`);
      },
    });
    for await (const object of stream) {
      // An object read in parts (a large Parquet file) counts once, with its last part.
      if (object.part === undefined || object.part.index === object.part.count - 1) {
        progress.advance(object.size);
      }
      await each(object);
      if (ctx.out.closed) break;
    }
  } finally {
    progress.stop();
  }
  const stats = stream.stats;
  if (ctx.out.closed) {
    // The output went away (`| head`): what was listed so far is no count of the range, so no
    // closing note; each unreadable object was named as it came.
    return { code: stats.objectsUnreadable > 0 ? EXIT.unreadable : EXIT.ok, stats };
  }
  const nothing = await closingNotes(ctx, stats, signals);
  if (nothing !== undefined) return { code: nothing, stats };
  if (stats.objectsUnreadable > 0) {
    await finalNote(
      ctx,
      `${plural(stats.objectsUnreadable, 'object')} of ${plural(stats.objects, 'object')} could not be read and ${stats.objectsUnreadable === 1 ? 'was' : 'were'} skipped (see above)`,
    );
    return { code: EXIT.unreadable, stats };
  }
  return { code: EXIT.ok, stats };
}

/** `cannot read KEY (decompress): invalid zstd data: ...` */
function describeUnreadable(problem: UnreadableObject): string {
  const error = problem.error;
  const cause = error instanceof ObjectDecodeError ? error.cause : error;
  const detail =
    cause instanceof ObjectTooLargeError
      ? cause.describe(SETTINGS[cause.limit].flag)
      : error instanceof ObjectGoneError
        ? error.message
        : problem.stage === 'fetch'
          ? describeError(error)
          : error instanceof ObjectDecodeError
            ? error.detail
            : error.message;
  return `cannot read ${problem.key} (${problem.stage}): ${detail}`;
}
