import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { defaultForcePathStyle } from './client-settings.js';

/** Where the exporter's own PutObject requests go: one URL per bucket, the key appended. */
export interface ObjectAddress {
  protocol: 'http:' | 'https:';
  hostname: string;
  port: number | undefined;
  /** The path up to the key, with a trailing slash: `/`, `/bucket/`, `/base/bucket/`. */
  basePath: string;
}

export interface AddressSettings {
  bucket: string;
  region: string;
  endpoint: string | undefined;
  forcePathStyle: boolean | undefined;
}

/**
 * The AWS partitions whose S3 endpoint is `s3.{region}.{suffix}`, by region name. Regions of the
 * other partitions (ISO, EUSC) go through the SDK, which knows their rules.
 */
const PARTITIONS: readonly { region: RegExp; suffix: string }[] = [
  { region: /^(us|eu|ap|sa|ca|me|af|il|mx)-[a-z]+-\d+$/, suffix: 'amazonaws.com' },
  { region: /^us-gov-[a-z]+-\d+$/, suffix: 'amazonaws.com' },
  { region: /^cn-[a-z]+-\d+$/, suffix: 'amazonaws.com.cn' },
];

/** Environment variables that change where the SDK sends requests (the SDK honours them). */
const ENDPOINT_VARIABLES = [
  'AWS_ENDPOINT_URL_S3',
  'AWS_ENDPOINT_URL',
  'AWS_USE_FIPS_ENDPOINT',
  'AWS_USE_DUALSTACK_ENDPOINT',
] as const;

/**
 * Why this bucket and endpoint need the AWS SDK's endpoint rules rather than the exporter's own
 * requests, or undefined when they do not: S3 Express directory buckets, FIPS and dual-stack
 * endpoints, endpoint variables, partitions other than aws, aws-cn and aws-us-gov.
 */
export function sdkNeeded(
  settings: AddressSettings,
  env: Readonly<Record<string, string | undefined>>,
): string | undefined {
  if (settings.bucket.endsWith('--x-s3')) return 'the bucket is an S3 Express directory bucket';
  if (settings.endpoint !== undefined) return undefined;
  for (const name of ENDPOINT_VARIABLES) {
    const value = env[name];
    if (value !== undefined && value !== '' && value !== 'false') return `${name} is set`;
  }
  if (!PARTITIONS.some((p) => p.region.test(settings.region)))
    return `the region ${settings.region} is outside the aws, aws-cn and aws-us-gov partitions`;
  return undefined;
}

/** Settings of the AWS shared config file that change where the SDK sends requests. */
const CONFIGURED_ENDPOINT =
  /^\s*(endpoint_url\s*=|use_fips_endpoint\s*=\s*true|use_dualstack_endpoint\s*=\s*true)/gim;

/**
 * Why the AWS shared config file (`AWS_CONFIG_FILE`, else `~/.aws/config`) needs the SDK's
 * endpoint rules: an `endpoint_url`, `use_fips_endpoint` or `use_dualstack_endpoint` in any of
 * its profiles (checking only the active one would be the SDK's whole profile logic again).
 */
export async function sharedConfigNeedsSdk(
  settings: AddressSettings,
  env: Readonly<Record<string, string | undefined>>,
): Promise<string | undefined> {
  if (settings.endpoint !== undefined) return undefined;
  const file = env.AWS_CONFIG_FILE || join(homedir(), '.aws', 'config');
  const text = await readFile(file, 'utf8').catch(() => '');
  const ignored = env.AWS_IGNORE_CONFIGURED_ENDPOINT_URLS === 'true';
  // Each setting, in order: an ignored endpoint_url does not hide a FIPS setting after it.
  const found = [...text.matchAll(CONFIGURED_ENDPOINT)]
    .map((m) => m[1] as string)
    .find((setting) => !(ignored && setting.startsWith('endpoint_url')));
  if (found === undefined) return undefined;
  return `${file} sets ${found.replace(/\s*=.*$/, '')}`;
}

/**
 * A bucket name that can be a DNS label of its own (no dots: TLS certificates are one level), as
 * the SDK's isVirtualHostableS3Bucket decides: "--" is allowed (`logs--prod`).
 */
function virtualHostable(bucket: string): boolean {
  return /^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/.test(bucket);
}

function isIpAddress(hostname: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(hostname) || hostname.startsWith('[');
}

/**
 * The address of a bucket, as the SDK's endpoint rules make it for the cases sdkNeeded leaves to
 * the exporter: path style when told, for an IP address, or for a name that cannot be a host
 * label; virtual-hosted style otherwise.
 */
export function objectAddress(settings: AddressSettings): ObjectAddress {
  const { bucket, endpoint } = settings;
  const url =
    endpoint === undefined
      ? new URL(`https://s3.${settings.region}.${partitionSuffix(settings.region)}`)
      : new URL(endpoint);
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new TypeError(`endpoint ${endpoint}: the protocol must be http: or https:`);
  const pathStyle =
    (settings.forcePathStyle ?? defaultForcePathStyle(endpoint)) ||
    isIpAddress(url.hostname) ||
    !virtualHostable(bucket);
  const base = url.pathname.endsWith('/') ? url.pathname : `${url.pathname}/`;
  return {
    protocol: url.protocol,
    hostname: pathStyle ? url.hostname : `${bucket}.${url.hostname}`,
    port: url.port === '' ? undefined : Number(url.port),
    basePath: pathStyle ? `${base}${encodeSegment(bucket)}/` : base,
  };
}

function partitionSuffix(region: string): string {
  return PARTITIONS.find((p) => p.region.test(region))?.suffix ?? 'amazonaws.com';
}

/** A path segment as S3 signs it: RFC 3986 unreserved characters stay, the rest is %-encoded. */
function encodeSegment(segment: string): string {
  return encodeURIComponent(segment).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/** The request path of a key: each `/`-separated segment encoded, the slashes kept. */
export function objectPath(address: ObjectAddress, key: string): string {
  return address.basePath + key.split('/').map(encodeSegment).join('/');
}
