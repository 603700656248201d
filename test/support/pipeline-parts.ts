import { Episodes } from '../../src/base/log.js';
import { type BatchOwner, MemoryBudget } from '../../src/pipeline/budget.js';
import { Outcomes } from '../../src/pipeline/outcomes.js';
import { type ExporterStats, emptyStats } from '../../src/pipeline/stats.js';
import { Uploader, type UploaderOptions } from '../../src/pipeline/uploader.js';
import { SdkObjectWriter } from '../../src/s3/sdk-writer.js';
import type { ScriptedS3 } from './scripted-s3.js';

/**
 * The exporter's pipeline without the exporter: its outcomes (and the owner they count for), memory budget (`maxBufferedBytes`,
 * default 1 MiB) and uploader to bucket `b` of the scripted S3 `s3` (deadlines 1 s, retries
 * within 5 ms, two at a time; `uploader` overrides).
 */
export function pipelineParts(
  s3: ScriptedS3,
  options: {
    stats?: ExporterStats;
    episodes?: Episodes;
    maxBufferedBytes?: number;
    uploader?: Partial<UploaderOptions>;
  } = {},
): { outcomes: Outcomes; budget: MemoryBudget; uploader: Uploader; owner: BatchOwner } {
  const maxBufferedBytes = options.maxBufferedBytes ?? 1 << 20;
  const outcomes = new Outcomes(options.stats ?? emptyStats(), options.episodes ?? new Episodes(), {
    slowRetryMillis: 1_000,
    maxBufferedBytes,
    requestTimeoutMillis: 1_000,
    flushTimeoutMillis: 1_000,
    endpoint: 'http://s3.test',
    signal: 'metrics',
  });
  const budget = new MemoryBudget(maxBufferedBytes);
  budget.addOpen({ bytes: 0 });
  // The one exporter whose batches these are.
  const owner: BatchOwner = { outcomes, pager: undefined };
  const uploader = new Uploader(
    {
      writer: new SdkObjectWriter(s3.client, 'b', {}),
      concurrency: 2,
      requestTimeoutMillis: 1_000,
      conditionalWrites: true,
      backoff: { initialDelayMillis: 1, maxDelayMillis: 5 },
      ...options.uploader,
    },
    budget,
  );
  return { outcomes, budget, uploader, owner };
}
