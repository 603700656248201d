import { uuidv7 } from 'uuidv7';
import type { InvalidOptionError } from '../../base/invalid-option.js';
import { s3Store } from '../../compact/store.js';
import { readEnvironment } from '../../config/environment.js';
import { type ResolvedConfig, resolveSources } from '../../config/resolve.js';
import { accessCheckKey } from '../../layout/outputs.js';
import { ReadAccessError } from '../../reader/errors.js';
import { defaultRegion, endpointName, endpointSwitchesOn } from '../../s3/client-settings.js';
import { createObjectWriter } from '../../s3/create-writer.js';
import {
  type AccessFaultReason,
  accessFault,
  describeError,
  errorShape,
  httpStatus,
} from '../../s3/errors.js';
import {
  classifyUploadError,
  conditionalRefusal,
  ENDPOINT_FAULTS,
  headerMayBeTheCause,
  networkCause,
} from '../../s3/verdict.js';
import { profileNote } from '../aws-profile.js';
import { type CommandContext, finalNote, note } from '../context.js';
import { EXIT, UsageError } from '../exit-codes.js';
import { alignRow, columnWidths } from '../format.js';
import { jsonLine, printable } from '../terminal-text.js';

/**
 * `otel-s3 check`: does the configured bucket and prefix give the exporter, the reader and the
 * compactor what each needs? It writes one small object under `{prefix}/_otel_s3_check/` (with
 * the exporter's own requests and PutObject settings), writes it again with If-None-Match, lists
 * it, reads it and deletes it (as the reader and the compactor do), and prints a row per step with
 * the fix for each failure. The exit code says whether the exporter can work: 0 when it can
 * store objects, 3 for an access fault, 4 when the endpoint cannot be reached.
 */

export interface CheckOptions {
  format: 'text' | 'json';
}

type Step = 'put' | 'conditional put' | 'list' | 'get' | 'delete';
type Consumer = 'exporter' | 'reader' | 'compactor';

/** What each step tries, who needs it to work, and the permission it needs. */
const STEPS: readonly { step: Step; neededBy: readonly Consumer[]; permission?: string }[] = [
  { step: 'put', neededBy: ['exporter', 'compactor'], permission: 's3:PutObject' },
  { step: 'conditional put', neededBy: ['compactor'] },
  { step: 'list', neededBy: ['reader', 'compactor'], permission: 's3:ListBucket' },
  { step: 'get', neededBy: ['reader', 'compactor'], permission: 's3:GetObject' },
  { step: 'delete', neededBy: ['compactor'], permission: 's3:DeleteObject' },
];

/** `ok`: works; `warn`: works with a limit the fix names; `failed`; `skipped`: not tried. */
export type CheckStatus = 'ok' | 'warn' | 'failed' | 'skipped';

export interface CheckRow {
  check: Step;
  neededBy: Consumer[];
  status: CheckStatus;
  /** What happened, e.g. `AccessDenied (HTTP 403): the credentials lack permission ...`. */
  result: string;
  /** What to do about it (failed and warn only). */
  fix?: string;
}

/** What `otel-s3 check --format json` prints. */
export interface CheckReport {
  where: string;
  endpoint: string;
  /** The object written and deleted. */
  key: string;
  checks: CheckRow[];
  /** Whether each can work here: the exporter needs put; the others every step they use. */
  can: Record<Consumer, boolean>;
  /** The object was left behind (delete failed). */
  leftBehind: boolean;
}

/** Runs the checks; see the module comment. */
export async function check(ctx: CommandContext, options: CheckOptions): Promise<number> {
  const { settings } = ctx;
  if (settings.source.kind !== 's3') {
    throw new UsageError('otel-s3 check tests S3 access: give --bucket (a directory needs none)');
  }
  const source = settings.source;
  const config = exporterConfig(ctx, source);
  const key = accessCheckKey(settings.prefix, `${uuidv7()}.check`);
  const body = Buffer.from(`otel-s3 check ${new Date().toISOString()}\n`);
  const endpoint = endpointName(config);
  const noEndpoint = noEndpointFix(
    endpointSwitchesOn(ctx.env),
    config.region ?? defaultRegion(ctx.env),
  );
  const where = `s3://${source.bucket}/${key}`;
  const writer = createObjectWriter(config).writer;
  const store = s3Store(source.bucket, {
    ...(source.endpoint === undefined ? {} : { endpoint: source.endpoint }),
    ...(source.region === undefined ? {} : { region: source.region }),
    ...(source.forcePathStyle === undefined ? {} : { forcePathStyle: source.forcePathStyle }),
  });
  const rows = new Map<Step, CheckRow>();
  const record = (step: Step, status: CheckStatus, result: string, fix?: string) => {
    const row = STEPS.find((s) => s.step === step);
    rows.set(step, {
      check: step,
      neededBy: [...(row?.neededBy ?? [])],
      status,
      result,
      ...(fix === undefined ? {} : { fix }),
    });
  };
  const failed = (step: Step, error: unknown, words = describeError(error)) => {
    const permission = STEPS.find((s) => s.step === step)?.permission ?? 's3:PutObject';
    const { result, fix } = failure(error, words, permission, settings.where, endpoint, {
      noEndpoint,
      timedOut: `no answer within OTEL_EXPORTER_S3_TIMEOUT (${config.requestTimeoutMillis} ms)`,
    });
    const profile =
      accessFault(error)?.reason === 'no-credentials' ? profileNote(ctx.env) : undefined;
    record(step, 'failed', result, profile ?? fix);
  };
  const deadline = () =>
    AbortSignal.any([ctx.signal, AbortSignal.timeout(config.requestTimeoutMillis)]);
  let stored = false;
  let putError: unknown;
  try {
    // put: the exporter's own request, with its PutObject settings (encryption, tags, ...).
    try {
      const answer = await writer.put(putRequest(key, body, false, deadline()));
      if (answer.etag === undefined) {
        // Every S3 API answers a stored object with an ETag: what took it takes anything.
        record(
          'put',
          'failed',
          'accepted without an ETag, which no S3 API does: what is uploaded there is lost',
          `no S3 API answers at this endpoint; check its host, port and path (now ${endpoint})`,
        );
      } else {
        stored = true;
        record('put', 'ok', `stored ${body.length} bytes at ${key}`);
      }
    } catch (error) {
      ctx.signal.throwIfAborted();
      putError = error;
      failed('put', error);
    }

    // conditional put: the same key again with If-None-Match: * must be refused.
    if (!stored) {
      record('conditional put', 'skipped', 'not tried: put failed');
    } else {
      try {
        await writer.put(putRequest(key, body, true, deadline()));
        record(
          'conditional put',
          'warn',
          'the server ignores If-None-Match: it overwrote the object',
          NO_CONDITIONAL_WRITES,
        );
      } catch (error) {
        ctx.signal.throwIfAborted();
        if (conditionalRefusal(error) !== undefined) {
          record('conditional put', 'ok', `refused an overwrite (${describeError(error)})`);
        } else if (accessFault(error) === undefined && headerMayBeTheCause(error)) {
          record(
            'conditional put',
            'warn',
            `the server does not take If-None-Match: ${describeError(error)}`,
            NO_CONDITIONAL_WRITES,
          );
        } else {
          failed('conditional put', error);
        }
      }
    }

    // list: as the reader lists a prefix.
    try {
      let found = false;
      for await (const listed of store.source.list(
        key.slice(0, key.lastIndexOf('/')),
        undefined,
        deadline(),
      )) {
        if (listed.key === key) found = true;
      }
      if (found || !stored) {
        record('list', 'ok', found ? 'listed the object' : 'listed (no object to find)');
      } else {
        record('list', 'failed', 'the listing does not show the object just stored');
      }
    } catch (error) {
      ctx.signal.throwIfAborted();
      failed('list', causeOf(error));
    }

    // get: as the reader reads an object.
    try {
      const got = await store.source.get(key, deadline(), 1024 * 1024);
      if (Buffer.from(got).equals(body)) record('get', 'ok', 'read the object back, unchanged');
      else if (stored) {
        record('get', 'failed', `read ${got.length} bytes back, not the ${body.length} stored`);
      } else record('get', 'failed', `read ${got.length} bytes of a key where nothing was stored`);
    } catch (error) {
      ctx.signal.throwIfAborted();
      const cause = causeOf(error);
      if (!stored && errorShape(cause).name === 'NoSuchKey') {
        record('get', 'ok', 'allowed (NoSuchKey: there was no object to read)');
      } else {
        failed('get', cause);
      }
    }

    // delete: as the compactor deletes what an output replaces.
    try {
      const refused = await store.delete([key], deadline());
      const why = refused.get(key);
      if (why === undefined) record('delete', 'ok', stored ? 'deleted the object' : 'allowed');
      else failed('delete', deleteError(why), why);
    } catch (error) {
      ctx.signal.throwIfAborted();
      failed('delete', causeOf(error));
    }
  } finally {
    writer.destroy();
    store.close();
  }

  const checks = STEPS.map(({ step }) => rows.get(step) as CheckRow);
  const works = (step: Step) => {
    const status = rows.get(step)?.status;
    return status === 'ok' || status === 'warn';
  };
  const can: Record<Consumer, boolean> = {
    exporter: works('put'),
    reader: works('list') && works('get'),
    compactor: STEPS.filter((s) => s.neededBy.includes('compactor')).every((s) => {
      // Without conditional writes the compactor still runs with --single-writer.
      return works(s.step);
    }),
  };
  const leftBehind = stored && rows.get('delete')?.status !== 'ok';
  const report: CheckReport = { where: settings.where, endpoint, key, checks, can, leftBehind };
  if (options.format === 'json') {
    await ctx.out.line(jsonLine(report));
  } else {
    for (const line of checkTable(checks)) await ctx.out.line(printable(line));
    await finalNote(ctx, summary(report));
  }
  if (leftBehind) note(ctx, `left ${where} behind: delete it by hand`);
  if (can.exporter) return EXIT.ok;
  if (accessFault(putError) !== undefined) return EXIT.access;
  // A setting to fix, refused before any request, as the reading commands' usage error.
  return errorShape(putError).name === 'EndpointError' ? EXIT.usage : EXIT.failure;
}

const NO_CONDITIONAL_WRITES =
  'none for the exporter (it falls back to plain PUTs; a retry may overwrite, never duplicate); the compactor needs --single-writer, and only one may run';

/** The exporter's configuration for these settings and the exporter's environment variables. */
function exporterConfig(
  ctx: CommandContext,
  source: { bucket: string; endpoint?: string; region?: string; forcePathStyle?: boolean },
): ResolvedConfig {
  const warn = (error: InvalidOptionError, instead?: string) =>
    note(ctx, `${error.detail}; the exporter would use ${instead ?? 'the default'}`);
  return resolveSources({
    options: {
      bucket: source.bucket,
      prefix: ctx.settings.prefix,
      ...(source.endpoint === undefined ? {} : { endpoint: source.endpoint }),
      ...(source.region === undefined ? {} : { region: source.region }),
      ...(source.forcePathStyle === undefined ? {} : { forcePathStyle: source.forcePathStyle }),
    },
    environment: readEnvironment(ctx.env, warn),
    warn,
  });
}

function putRequest(key: string, body: Buffer, ifNoneMatch: boolean, signal: AbortSignal) {
  return {
    key,
    body,
    contentType: 'text/plain; charset=utf-8',
    ifNoneMatch,
    crc32: undefined,
    sha256: undefined,
    signal,
  };
}

/** The S3 error under a reader's or compactor's wrapping (ReadAccessError keeps it as cause). */
function causeOf(error: unknown): unknown {
  return error instanceof ReadAccessError || (error instanceof Error && error.cause !== undefined)
    ? (error as Error).cause
    : error;
}

/**
 * A delete's refusal as the compactor's store words it (`AccessDenied: Access Denied`,
 * `NotFound (HTTP 404): ...`, `ECONNREFUSED: connect ...`), back into an error to find the fix
 * by: an S3 code as its name, an HTTP status as the AWS SDK keeps it, a network code as Node's
 * `code`. The row shows the store's words as they are.
 */
function deleteError(why: string): unknown {
  const error = new Error(why) as Error & Record<string, unknown>;
  const status = /^(?:[A-Za-z.]+ \()?HTTP (\d{3})\b/.exec(why)?.[1];
  if (status !== undefined) error.$metadata = { httpStatusCode: Number(status) };
  const code = /^([A-Za-z.]+)(?::| \(HTTP)/.exec(why)?.[1];
  if (code === undefined || code === 'HTTP') return error;
  if (/^E[A-Z]+$/.test(code)) error.code = code;
  else error.name = code;
  return error;
}

/** The CLI's user's fix for each access fault; `permission` is the step's. */
function accessFix(
  reason: AccessFaultReason,
  permission: string,
  where: string,
  endpoint: string,
): string {
  switch (reason) {
    case 'access-denied':
      return permission === 's3:ListBucket'
        ? `grant s3:ListBucket on the bucket (it can be limited to the prefix with the s3:prefix condition), for ${where}`
        : `grant ${permission} on ${where}*`;
    case 'account-disabled':
      return 'contact the storage provider or its administrator, or use other credentials';
    case 'bad-credentials':
      return `check the credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE) and the endpoint (${endpoint})`;
    case 'no-credentials':
      return 'set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE';
    case 'no-such-bucket':
      return `create the bucket, or fix --bucket (and --endpoint ${endpoint}, --region)`;
    case 'wrong-region':
      return 'set --region (or AWS_REGION) to the bucket region';
    case 'invalid-bucket':
      return 'fix --bucket';
    case 'quota-exceeded':
      return 'raise the quota or free space in the bucket';
    case 'kms-key':
      return "check the bucket's SSE-KMS key (it exists and is enabled) and grant kms:GenerateDataKey and kms:Decrypt on it";
  }
}

/**
 * The fix when the AWS SDK's endpoint rules have no endpoint for the settings (EndpointError,
 * before any request): the endpoint switches set to true, else the settings of the AWS config
 * file, or an endpoint.
 */
function noEndpointFix(switches: readonly string[], region: string): string {
  if (switches.length === 0) {
    return `the AWS SDK has no endpoint for region ${region} with these settings (use_fips_endpoint or use_dualstack_endpoint of the AWS config file?): give --endpoint`;
  }
  const them =
    switches.length === 1
      ? 'the variable (or set it to false)'
      : 'the variables (or set them to false)';
  return `the AWS SDK has no endpoint for ${switches.join(' and ')} with region ${region}: unset ${them}, or give --endpoint`;
}

/** What failed (`words`: the error as the row says it) and what to do about it. */
function failure(
  error: unknown,
  words: string,
  permission: string,
  where: string,
  endpoint: string,
  said: { noEndpoint: string; timedOut: string },
): { result: string; fix: string } {
  if (errorShape(error).name === 'EndpointError') {
    return { result: words, fix: said.noEndpoint };
  }
  if (errorShape(error).name === 'AbortError') {
    // Not Ctrl-C (that stops the check): the step's deadline, the exporter's request timeout.
    return { result: said.timedOut, fix: `check the endpoint (${endpoint}) and the network` };
  }
  const fault = accessFault(error);
  if (fault !== undefined) {
    return {
      result: `${words}: ${fault.cause}`,
      fix: accessFix(fault.reason, permission, where, endpoint),
    };
  }
  const network = networkCause(error);
  if (network !== undefined) {
    return { result: network, fix: `check the endpoint (${endpoint}) and the network` };
  }
  if (errorShape(error).name === 'TimeoutError') {
    return {
      result: words,
      fix: `check the endpoint (${endpoint}) and the network`,
    };
  }
  if (httpStatus(error) !== undefined && classifyUploadError(error).kind === 'retry') {
    // A 5xx, throttling, MinIO's XMinioBackendDown: no refusal of this configuration.
    return {
      result: words,
      fix: 'a fault of the server that uploads retry (it may pass): run the check again later',
    };
  }
  const verdict = classifyUploadError(error);
  if (verdict.kind === 'config' && ENDPOINT_FAULTS.has(verdict.reason)) {
    // No refusal of these settings: what answers at the endpoint is not the S3 API as given.
    return { result: words, fix: `${verdict.hint} (now ${endpoint})` };
  }
  return { result: words, fix: 'see the error; the server refused the request' };
}

function checkTable(checks: CheckRow[]): string[] {
  const rows = [
    ['check', 'needed by', 'result', 'fix'],
    ...checks.map((c) => [
      c.check,
      c.neededBy.join(', '),
      c.status === 'ok' ? `ok: ${c.result}` : `${c.status}: ${c.result}`,
      c.fix ?? '',
    ]),
  ];
  const widths = columnWidths(rows);
  return rows.map((row) => alignRow(row, widths, new Set()));
}

/** `the exporter can work; the reader can read; the compactor cannot: list failed`. */
function summary(report: CheckReport): string {
  const failedSteps = (who: Consumer) =>
    report.checks
      .filter((c) => c.neededBy.includes(who) && (c.status === 'failed' || c.status === 'skipped'))
      .map((c) => c.check);
  const say = (who: Consumer, verb: string) =>
    report.can[who]
      ? `the ${who} can ${verb}`
      : `the ${who} cannot ${verb}: ${failedSteps(who).join(', ')} failed`;
  return `${report.where}: ${say('exporter', 'work')}; ${say('reader', 'read')}; ${say('compactor', 'run')}`;
}
