/** What a process loads: a child run with test/support/record-modules.mjs, and the rules about it. */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const RECORDER = new URL('./record-modules.mjs', import.meta.url).pathname;

/**
 * What an exporter-only service must never load: the reader, the CLI, compaction and the Parquet
 * modules of this package (from src/ or either build), and the libraries only they use (xxhash-wasm
 * too, though the Parquet writer of an exporter's files has the code that would load it).
 */
export const READER_ONLY: readonly RegExp[] = [
  /\/(src|dist|dist\/cjs)\/(reader|cli|compact|parquet)\//,
  /\/(src|dist|dist\/cjs)\/(reader|cli)\.(ts|js)$/,
  /\/(src|dist|dist\/cjs)\/signals\/[a-z]+\/(parquet\/|read\.|rows\.)/,
  // The OTLP decoders: an exporter encodes, only the reader decodes (signals/otlp-read.ts).
  /\/(src|dist|dist\/cjs)\/(encoding\/(decode-request|otlp-proto-decode)|signals\/otlp-read)\.(ts|js)$/,
  /\/body\/parquet-body\.js$/,
  /\/node_modules\/(commander|cli-progress|hyparquet|hyparquet-writer)\//,
  // The hash of bloom filters, which only compaction's files have (src/parquet/bloom-hash.js).
  /\/node_modules\/xxhash-wasm\//,
];

export const readerOnly = (module: string) => READER_ONLY.some((rule) => rule.test(module));

/**
 * What a Parquet exporter loads on its main thread: the column builders its exports are
 * appended to (the writer, for spans and log records, runs in the worker only).
 */
export const COLUMN_BUILDERS =
  /\/(src|dist|dist\/cjs)\/(signals\/[a-z]+\/parquet\/(column-builders|append-sdk|append-otlp|column-store|sealed|tables)|parquet\/(attribute-text|grown|tables|text-bytes))\.(ts|js)$/;

/**
 * What a Parquet exporter of metrics also loads on its main thread, at its first export: the
 * writer (plain JavaScript, src/parquet and src/signals/metrics/parquet) and parquet-body.js,
 * which make its files there in slices. Never the reader's TypeScript beside them.
 */
export const METRICS_PARQUET_WRITER =
  /\/(src|dist|dist\/cjs)\/(parquet\/[a-z0-9-]+|signals\/metrics\/parquet\/[a-z0-9-]+|body\/parquet-body)\.js$/;

/** Runs `node [nodeArgs] file` in `cwd` with the recorder; returns every module it loaded. */
export async function loadedModules(
  nodeArgs: string[],
  file: string,
  options: { cwd: string; env?: Record<string, string> },
): Promise<{ modules: string[]; stdout: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'otel-s3-loaded-'));
  const list = join(dir, 'modules.txt');
  try {
    const env: NodeJS.ProcessEnv = { ...process.env, ...options.env, LOADED_MODULES_FILE: list };
    delete env.NODE_OPTIONS;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [...nodeArgs, '--import', RECORDER, file],
      { cwd: options.cwd, env, timeout: 120_000 },
    );
    const modules = [
      ...new Set(
        readFileSync(list, 'utf8')
          .split('\n')
          .filter((line) => line.length > 0)
          .map((line) => (line.startsWith('file://') ? new URL(line).pathname : line)),
      ),
    ];
    return { modules, stdout };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
