import type { SignalName } from '../../layout/formats.js';
import type { CommandContext } from '../context.js';
import { readObjects } from '../read-objects.js';
import { jsonLine } from '../terminal-text.js';

export interface CatOptions {
  withKey: boolean;
  /** Whose objects to print. */
  signals: readonly SignalName[];
}

/**
 * `otel-s3 cat`: each object's request (ExportMetricsServiceRequest, ExportTraceServiceRequest or
 * ExportLogsServiceRequest) as one line of OTLP/JSON, whatever its stored format; the output is
 * an OTLP JSON-lines file (what the Collector's otlpjsonfilereceiver reads). A Parquet file read
 * in parts (over 16 MiB) is a line per row group. `--with-key` wraps each line as
 * {"key","signal","time","request"}, with "part" ({"index","count"}) for a row group.
 */
export async function cat(ctx: CommandContext, options: CatOptions): Promise<number> {
  const { code } = await readObjects(
    ctx,
    false,
    async (object) => {
      const line = options.withKey
        ? jsonLine({
            key: object.key,
            signal: object.signal,
            time: object.time.toISOString(),
            // A Parquet file over 16 MiB comes a row group at a time: a line each, told apart.
            ...(object.part === undefined ? {} : { part: object.part }),
            request: object.request,
          })
        : jsonLine(object.request);
      await ctx.out.line(line);
      await ctx.out.flush(); // one object at a time, so a terminal sees each as it comes
    },
    options.signals,
  );
  return code;
}
