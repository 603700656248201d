import type { ExportResult } from '@opentelemetry/core';
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import type { BodyMaker } from '../compression/index.js';
import type { RecordFormat } from '../encoding/format.js';
import { describeError } from '../s3-errors.js';
import { Admission, type AdmissionOptions, type AdmissionParts, failed } from './admission.js';
import { type KeyInputs, type OpenBatch, RecordBatch } from './open-batch.js';

/**
 * How an export enters the open batch, the format's way: OTLP formats encode it into a record
 * outside the mutex and append the record; Parquet appends its points to column builders inside
 * it (appending is the encoding). The column builders load on first use, so a service that
 * exports OTLP never loads them.
 */
export interface Intake {
  /**
   * Appends one export. Throws (synchronously) only if an OTLP record cannot be encoded; an
   * export the open batch cannot take answers FAILED, counted through `appendFailed`.
   */
  accept(metrics: ResourceMetrics, points: number, inputs: KeyInputs): Promise<ExportResult>;
  /** Seals the open batch now (flush, shutdown). */
  sealNow(): Promise<void>;
  /** The open batch's bytes, for the memory budget. */
  readonly open: { readonly bytes: number };
}

export type IntakeParts = Omit<AdmissionParts<unknown>, 'open'>;

/**
 * OTLP records: encoded on the caller's turn, outside the mutex; compressed as they are
 * appended where the body maker offers frames.
 */
export function recordIntake(
  format: RecordFormat,
  options: AdmissionOptions,
  parts: IntakeParts & { bodies: Pick<BodyMaker, 'openFrame'> },
): Intake {
  const open = new RecordBatch(format, parts.bodies.openFrame);
  const admission = new Admission(options, { ...parts, open });
  return {
    open,
    accept: (metrics, points, inputs) =>
      admission.accept({ item: format.encode(metrics), points, inputs }),
    sealNow: () => admission.sealNow(),
  };
}

/**
 * Parquet columns. The builders' module is imported on demand; until it is there (the first
 * milliseconds), exports and seals wait for it in the order they came.
 */
export function columnIntake(options: AdmissionOptions, parts: IntakeParts): Intake {
  let open: OpenBatch<ResourceMetrics> | undefined;
  const ready = import('./column-batch.js').then(({ ColumnBatch }) => {
    open = new ColumnBatch();
    return new Admission(options, { ...parts, open });
  });
  return {
    open: {
      get bytes() {
        return open?.bytes ?? 0;
      },
    },
    accept: (metrics, points, inputs) =>
      ready
        .then((admission) => admission.accept({ item: metrics, points, inputs }))
        .catch((error: unknown) => {
          parts.appendFailed(error);
          return failed(`could not append metrics to the Parquet columns: ${describeError(error)}`);
        }),
    sealNow: () => ready.then((admission) => admission.sealNow()),
  };
}
