import type { S3ClientConfig } from '@aws-sdk/client-s3';

/** The AWS SDK's checksum modes (requestChecksumCalculation, responseChecksumValidation). */
export const CHECKSUM_MODES = ['WHEN_SUPPORTED', 'WHEN_REQUIRED'] as const;
export type ChecksumMode = (typeof CHECKSUM_MODES)[number];

/** How to reach S3: the connection options the exporter and the reader share. */
export interface ConnectionSettings {
  /** Default: AWS_REGION, else AWS_DEFAULT_REGION, else `us-east-1`. */
  region?: string | undefined;
  endpoint?: string | undefined;
  /** Default: true with a custom endpoint (most self-hosted servers need it). */
  forcePathStyle?: boolean | undefined;
  credentials?: S3ClientConfig['credentials'] | undefined;
  /** Default: defaultChecksumMode(endpoint). */
  requestChecksumCalculation?: ChecksumMode | undefined;
  /** Default: defaultChecksumMode(endpoint) for the reader; the exporter reads no bodies. */
  responseChecksumValidation?: ChecksumMode | undefined;
  userAgent?: string | undefined;
}

/**
 * Who the client is for. The exporter makes a single attempt per send (its own retry loop is the
 * only one, so retries keep their key and their deadline) and bounds only the connect phase (the
 * request deadline is its AbortSignal). The reader's requests are idempotent: the SDK's retries
 * are right there, and a request to an endpoint that never answers fails at the idle timeout
 * instead of hanging.
 */
export type ClientRole = { role: 'exporter'; requestTimeoutMillis: number } | { role: 'reader' };

/** The region when none is given: the AWS SDK's variables, else us-east-1. */
export function defaultRegion(env: Readonly<Record<string, string | undefined>>): string {
  return env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1';
}

/** The AWS SDK's endpoint switches, which its endpoint rules refuse in some partitions. */
const ENDPOINT_SWITCHES = ['AWS_USE_FIPS_ENDPOINT', 'AWS_USE_DUALSTACK_ENDPOINT'] as const;

/** The endpoint switches set to true (the SDK reads "true" only), as `NAME=true`. */
export function endpointSwitchesOn(env: Readonly<Record<string, string | undefined>>): string[] {
  return ENDPOINT_SWITCHES.filter((variable) => env[variable] === 'true').map(
    (variable) => `${variable}=true`,
  );
}

/** The AWS SDK's endpoint variables, in the order it reads them. */
const ENDPOINT_URL_VARIABLES = ['AWS_ENDPOINT_URL_S3', 'AWS_ENDPOINT_URL'] as const;

/** The endpoint variable the AWS SDK sends requests to (see endpointName), if one is set. */
export function endpointUrlVariable(
  env: Readonly<Record<string, string | undefined>>,
): { name: string; value: string } | undefined {
  if (env.AWS_IGNORE_CONFIGURED_ENDPOINT_URLS === 'true') return undefined;
  for (const name of ENDPOINT_URL_VARIABLES) {
    const value = env[name]?.trim();
    if (value !== undefined && value !== '') return { name, value };
  }
  return undefined;
}

/**
 * Where requests go, as messages name it: the endpoint URL; without one, the URL an AWS SDK
 * endpoint variable sets (which the SDK then sends to: see sdkNeeded), with the variable's name
 * and without user info or query; else AWS S3 in its region.
 */
export function endpointName(
  settings: ConnectionSettings,
  env: Readonly<Record<string, string | undefined>> = process.env,
): string {
  if (settings.endpoint !== undefined) return settings.endpoint;
  const variable = endpointUrlVariable(env);
  if (variable !== undefined)
    return `${shownUrl(variable.value) ?? 'the endpoint'} (${variable.name})`;
  return `AWS S3 (${settings.region ?? defaultRegion(env)})`;
}

/** A URL's scheme, host and path, never its user info or query; undefined if it is none. */
function shownUrl(text: string): string | undefined {
  try {
    const url = new URL(text);
    return `${url.protocol}//${url.host}${url.pathname === '/' ? '' : url.pathname}`;
  } catch {
    return undefined;
  }
}

/** Path-style addressing unless told otherwise: on for a custom endpoint. */
export function defaultForcePathStyle(endpoint: string | undefined): boolean {
  return endpoint !== undefined;
}

/**
 * `WHEN_REQUIRED` with a custom endpoint: many S3-compatible servers (B2, R2, older MinIO)
 * reject the CRC32 checksums the SDK sends by default. `WHEN_SUPPORTED` on AWS.
 */
export function defaultChecksumMode(endpoint: string | undefined): ChecksumMode {
  return endpoint === undefined ? 'WHEN_SUPPORTED' : 'WHEN_REQUIRED';
}

/**
 * The endpoint as the SDK gets it: a base path's trailing slashes dropped. The SDK's
 * virtual-hosted rule appends "/" and the key to the path as given (`/base/` gives
 * `/base//key`), where its path-style rule and objectAddress give `/base/key`: the reader would
 * look for other keys than the exporter wrote.
 */
function sdkEndpoint(endpoint: string): string {
  const trimmed = endpoint.trim();
  try {
    if (new URL(trimmed).pathname.length > 1) return trimmed.replace(/\/+$/, '');
  } catch {
    // Not a URL: the SDK says so.
  }
  return endpoint;
}

export const CONNECT_TIMEOUT_MILLIS = 5_000;
/**
 * How long a reader's request may wait for the server's next byte, headers or body (the AWS CLI's
 * read timeout). A socket timeout: the SDK's `requestTimeout` only warns unless told to throw,
 * and would also cut off a long download that is still moving.
 */
const READER_IDLE_TIMEOUT_MILLIS = 60_000;

/** The S3ClientConfig for these settings: the one place the client defaults are decided. */
export function s3ClientConfig(
  settings: ConnectionSettings,
  role: ClientRole,
  env: Readonly<Record<string, string | undefined>> = process.env,
): S3ClientConfig {
  const { endpoint } = settings;
  const checksums = defaultChecksumMode(endpoint);
  const common: S3ClientConfig = {
    region: settings.region ?? defaultRegion(env),
    // An explicit endpoint is where requests go, as for the exporter's own requests (and
    // botocore): the SDK's endpoint rules refuse it with AWS_USE_FIPS_ENDPOINT or
    // AWS_USE_DUALSTACK_ENDPOINT set ("A custom endpoint cannot be combined with FIPS").
    ...(endpoint === undefined
      ? {}
      : { endpoint: sdkEndpoint(endpoint), useFipsEndpoint: false, useDualstackEndpoint: false }),
    forcePathStyle: settings.forcePathStyle ?? defaultForcePathStyle(endpoint),
    ...(settings.credentials === undefined ? {} : { credentials: settings.credentials }),
    ...(settings.userAgent === undefined ? {} : { customUserAgent: settings.userAgent }),
    requestChecksumCalculation: settings.requestChecksumCalculation ?? checksums,
  };
  if (role.role === 'exporter') {
    return {
      ...common,
      maxAttempts: 1,
      responseChecksumValidation: 'WHEN_REQUIRED',
      requestHandler: {
        connectionTimeout: Math.min(role.requestTimeoutMillis, CONNECT_TIMEOUT_MILLIS),
      },
    };
  }
  return {
    ...common,
    responseChecksumValidation: settings.responseChecksumValidation ?? checksums,
    requestHandler: {
      connectionTimeout: CONNECT_TIMEOUT_MILLIS,
      socketTimeout: READER_IDLE_TIMEOUT_MILLIS,
    },
  };
}
