import type { S3Client } from '@aws-sdk/client-s3';
import { log } from '../base/log.js';
import {
  CONNECT_TIMEOUT_MILLIS,
  type ConnectionSettings,
  defaultRegion,
  s3ClientConfig,
} from './client-settings.js';
import {
  type AddressSettings,
  objectAddress,
  sdkNeeded,
  sharedConfigNeedsSdk,
} from './object-address.js';
import type { ObjectWriter, PutObjectFields } from './object-writer.js';
import { SdkObjectWriter } from './sdk-writer.js';
import { SignedObjectWriter } from './signed-writer.js';

/** `signed`: the exporter's own SigV4 requests; `sdk`: an AWS SDK S3Client. */
export type Transport = 'signed' | 'sdk';

export interface WriterHandle {
  writer: ObjectWriter;
  /** True when the exporter made the connection (not the caller's `s3Client`). */
  owned: boolean;
  /** Which transport stores the objects (decided at the first upload: see sharedConfigNeedsSdk). */
  transport: () => Promise<Transport>;
}

type Env = Readonly<Record<string, string | undefined>>;

/** What the writer needs of the exporter's resolved configuration. */
export interface WriterSettings extends ConnectionSettings {
  bucket: string;
  s3Client: S3Client | undefined;
  requestTimeoutMillis: number;
  putObject: PutObjectFields;
}

/**
 * How the exporter stores objects: through the caller's `s3Client`; through an SDK client it
 * makes when the bucket, the environment or the shared config file need the SDK's endpoint
 * rules (the SDK is imported at the first upload); otherwise with its own signed requests,
 * which never load `@aws-sdk/client-s3`.
 */
export function createObjectWriter(config: WriterSettings, env: Env = process.env): WriterHandle {
  const { bucket, putObject } = config;
  if (config.s3Client !== undefined) {
    const writer = new SdkObjectWriter(config.s3Client, bucket, putObject);
    return { writer, owned: false, transport: async () => 'sdk' };
  }
  const region = config.region ?? defaultRegion(env);
  const where: AddressSettings = {
    bucket,
    region,
    endpoint: config.endpoint,
    forcePathStyle: config.forcePathStyle,
  };
  const viaSdk = (why: string): ObjectWriter => {
    log.debug(`uploads go through the AWS SDK: ${why}`);
    const settings = s3ClientConfig(config, {
      role: 'exporter',
      requestTimeoutMillis: config.requestTimeoutMillis,
    });
    const make = async () => new (await import('@aws-sdk/client-s3')).S3Client(settings);
    return new SdkObjectWriter(make, bucket, putObject);
  };
  const reason = sdkNeeded(where, env);
  if (reason !== undefined)
    return { writer: viaSdk(reason), owned: true, transport: async () => 'sdk' };
  const signed = new SignedObjectWriter({
    address: objectAddress(where),
    region,
    credentials: config.credentials,
    userAgent: config.userAgent,
    connectTimeoutMillis: Math.min(config.requestTimeoutMillis, CONNECT_TIMEOUT_MILLIS),
    fields: putObject,
  });
  // Read at the first upload: the constructor touches no disk and starts no libuv thread.
  let chosen: Promise<ObjectWriter> | undefined;
  const choose = () =>
    (chosen ??= sharedConfigNeedsSdk(where, env).then((why) => {
      if (why === undefined) return signed;
      signed.destroy();
      return viaSdk(why);
    }));
  const writer: ObjectWriter = {
    put: async (request) => (await choose()).put(request),
    destroy: () => {
      signed.destroy();
      void chosen?.then((w) => w.destroy());
    },
  };
  return {
    writer,
    owned: true,
    transport: async () => ((await choose()) === signed ? 'signed' : 'sdk'),
  };
}
