import type { ExportResult } from '@opentelemetry/core';
import type { BodyMaker } from '../body/index.js';
import { newTally, type RecordFormat } from '../encoding/records.js';
import { describeError } from '../s3/errors.js';
import type { ColumnBuilders } from '../signals/signal.js';
import { Admission, type AdmissionOptions, type AdmissionParts, failed } from './admission.js';
import { ColumnBatch } from './column-batch.js';
import { type KeyInputs, RecordBatch } from './open-batch.js';

/**
 * How an export enters the open batch, the format's way: OTLP formats encode it into a record
 * outside the mutex and append the record; Parquet appends its items to column builders inside
 * it (appending is the encoding). The column builders load on first use, so a service that
 * exports OTLP never loads them.
 */
export interface Intake<Item> {
  /**
   * Appends one export. Throws (synchronously) only if an OTLP record cannot be encoded; an
   * export the open batch cannot take answers FAILED, counted through `appendFailed`.
   */
  accept(item: Item, inputs: KeyInputs): Promise<ExportResult>;
  /**
   * Seals the open batch now (flush, shutdown). Parquet's waits for its column builders to load:
   * callers bound the wait. `final` (shutdown): a seal that throws does not start the batch's
   * age timer again.
   */
  sealNow(final?: boolean): Promise<void>;
  /**
   * Shutdown gave up waiting for Parquet's column builders: the exports waiting for them are
   * answered FAILED with `message` and never appended; returns how many items they held. OTLP
   * formats have none.
   */
  abandonWaiting(message: string): number;
  /** The open batch's bytes, for the memory budget. */
  readonly open: { readonly bytes: number };
}

export type IntakeParts<Item = unknown> = Omit<AdmissionParts<Item>, 'open'>;

/**
 * OTLP records: encoded on the caller's turn, outside the mutex; compressed as they are
 * appended where the body maker offers frames.
 */
export function recordIntake<Item>(
  format: RecordFormat<Item>,
  options: AdmissionOptions,
  parts: IntakeParts & { bodies: Pick<BodyMaker, 'openFrame'> },
): Intake<Item> {
  const open = new RecordBatch(format, parts.bodies.openFrame);
  const admission = new Admission<Item>(options, { ...parts, open });
  return {
    open,
    accept: (item, inputs) => {
      // The one walk of the export: encoding it counts its items (and its oldest time).
      const tally = newTally(options.times);
      const record = format.encode(item, tally);
      return admission.accept({
        record,
        points: tally.items,
        inputs: { ...inputs, dataTimeMillis: tally.oldestMillis },
      });
    },
    sealNow: (final) => admission.sealNow(final),
    abandonWaiting: () => 0,
  };
}

/**
 * Parquet columns. The signal's builders are loaded on demand; until they are there (the first
 * milliseconds), exports and seals wait for them in the order they came.
 */
export function columnIntake<Item>(
  loadColumns: () => Promise<() => ColumnBuilders<Item>>,
  options: AdmissionOptions,
  parts: IntakeParts<Item> & {
    /** The items of an export never appended (abandoned), counted without the builders. */
    itemsOf(item: Item): number;
  },
): Intake<Item> {
  let open: ColumnBatch<Item> | undefined;
  /** Exports waiting for the builders, until each is appended or abandoned. */
  const waiting = new Set<{ item: Item; answer: (result: ExportResult) => void }>();
  const ready = loadColumns().then((builders) => {
    open = new ColumnBatch(builders());
    return new Admission<Item>(options, { ...parts, open });
  });
  // A failed load is each export's answer (FAILED, counted through appendFailed), not an
  // unhandled rejection before the first export comes.
  ready.catch(() => {});
  const notAppended = (error: unknown): ExportResult => {
    parts.appendFailed(error);
    return failed(`could not append to the Parquet columns: ${describeError(error)}`);
  };
  return {
    open: {
      get bytes() {
        return open?.bytes ?? 0;
      },
    },
    accept: (item, inputs) =>
      new Promise<ExportResult>((answer) => {
        const entry = { item, answer };
        waiting.add(entry);
        ready.then(
          (admission) => {
            // Abandoned meanwhile: answered already, and never appended.
            if (!waiting.delete(entry)) return;
            admission
              .accept({ item, inputs, times: options.times })
              .then(answer, (error: unknown) => answer(notAppended(error)));
          },
          (error: unknown) => {
            if (waiting.delete(entry)) answer(notAppended(error));
          },
        );
      }),
    abandonWaiting: (message) => {
      let items = 0;
      for (const entry of waiting) {
        entry.answer(failed(message));
        items += parts.itemsOf(entry.item);
      }
      waiting.clear();
      return items;
    },
    // Builders that failed to load never held an export: nothing to seal.
    sealNow: (final) =>
      ready.then(
        (admission) => admission.sealNow(final),
        () => undefined,
      ),
  };
}
