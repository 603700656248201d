import { parseXML } from '@aws-sdk/xml-builder';
import { notS3Answer, type S3ErrorShape } from './errors.js';

/** How much of an error body is read: S3's are a few hundred bytes. */
const MAX_ERROR_BODY = 64 * 1024;

/** The headers of a response, lower-cased names, as the SDK's `$response.headers`. */
export type ResponseHeaders = Record<string, string | undefined>;

/** The start of a response body, at most `max` bytes; the rest is discarded. */
export async function readStart(
  body: AsyncIterable<Uint8Array> | undefined,
  max = MAX_ERROR_BODY,
): Promise<Buffer> {
  if (body === undefined) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    if (size < max) chunks.push(Buffer.from(chunk.subarray(0, max - size)));
    size += chunk.length;
  }
  return Buffer.concat(chunks);
}

/** A parsed element's value when it is one element with children, not text or a list. */
function element(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/**
 * The Code and Message of an S3 XML error body, when it is one: `<Error>`, or `<Error>` in an
 * `<ErrorResponse>` as some S3-compatible servers and AWS's query protocol answer (the SDK
 * reads both). Any other root, or more than one `<Error>`, gives nothing.
 */
function errorFields(body: Buffer): { code?: string; message?: string } {
  if (body.length === 0) return {};
  try {
    const parsed = element(parseXML(body.toString('utf8'))) ?? {};
    const e =
      (Object.hasOwn(parsed, 'Error')
        ? element(parsed.Error)
        : Object.hasOwn(parsed, 'ErrorResponse')
          ? element(element(parsed.ErrorResponse)?.Error)
          : undefined) ?? {};
    return {
      ...(typeof e.Code === 'string' ? { code: e.Code } : {}),
      ...(typeof e.Message === 'string' ? { message: e.Message } : {}),
    };
  } catch {
    return {}; // not XML (a proxy's HTML page): the status says enough
  }
}

/**
 * The error for a non-2xx answer to a PutObject, shaped like the AWS SDK's: `name` is the S3
 * error code (`NotFound` or `UnknownError` without one, as the SDK says), with the status and
 * the response headers.
 */
export function errorFromResponse(
  status: number,
  headers: ResponseHeaders,
  body: Buffer,
): Error & S3ErrorShape {
  const fields = errorFields(body);
  const { code } = fields;
  // No S3 error in the body (a proxy's page, a TLS port's 400): what it said is the message.
  const message =
    fields.message ??
    (code === undefined && body.length > 0 ? notS3Answer(body.toString('utf8')) : undefined);
  const name = code ?? (status === 404 ? 'NotFound' : 'UnknownError');
  const error = new Error(message ?? name) as Error & S3ErrorShape & Record<string, unknown>;
  error.name = name;
  error.$fault = status >= 500 ? 'server' : 'client';
  error.$metadata = {
    httpStatusCode: status,
    ...(headers['x-amz-request-id'] === undefined
      ? {}
      : { requestId: headers['x-amz-request-id'] }),
  };
  error.$response = { statusCode: status, headers };
  return error;
}
