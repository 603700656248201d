import { defaultKeyTemplate } from './formats.js';
import { KeyTemplate } from './key-template.js';

export interface KeyParts {
  /** Normalized prefix (no leading or trailing slash), may be empty. */
  prefix: string;
  filePrefix: string;
  /** Partition time, rendered in UTC. */
  time: Date;
  /** Format extension followed by compression extension, e.g. `.json.zst`. */
  extension: string;
  /** Unique, time-ordered id; a fresh UUIDv7 unless given. */
  id?: string;
}

/**
 * A key in the default layout, compatible with the OTel Collector's awss3receiver:
 * `{prefix}/year=%Y/month=%m/day=%d/hour=%H/minute=%M/{filePrefix}metrics_{uuidv7}{extension}`
 * (UTC). The exporter renders its keys through the same KeyTemplate.
 */
export function objectKey(parts: KeyParts): string {
  const template = new KeyTemplate(defaultKeyTemplate('otlp-json', 'metrics'), {
    prefix: parts.prefix,
    filePrefix: parts.filePrefix,
    timeZone: 'UTC',
  });
  return template.render({
    time: parts.time,
    attributes: {},
    extension: parts.extension,
    ...(parts.id === undefined ? {} : { id: parts.id }),
  });
}
