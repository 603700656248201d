import { ExportResultCode } from '@opentelemetry/core';
import { expect, test } from 'vitest';
import { Admission } from '../../../src/pipeline/admission.js';
import { type BatchOwner, MemoryBudget } from '../../../src/pipeline/budget.js';
import type { OpenJournal } from '../../../src/pipeline/journal-port.js';
import { RecordBatch } from '../../../src/pipeline/open-batch.js';
import type { Outcomes } from '../../../src/pipeline/outcomes.js';
import type { SealedBatch } from '../../../src/pipeline/sealed-batch.js';

const inputs = { attributes: {}, group: '', dataTimeMillis: undefined };

test('a batch sealed by an export whose append then throws still goes on to be stored', async () => {
  const budget = new MemoryBudget(1 << 20);
  const owner: BatchOwner = {
    outcomes: { appended() {}, sealed() {}, exportRejectedForRoom() {} } as unknown as Outcomes,
    pager: undefined,
  };
  let appends = 0;
  // A journal whose copy of the second export fails (it runs after the batch was sealed for it).
  const journal: OpenJournal = {
    bytes: 0,
    cost: () => 0,
    append: () => {
      if (++appends === 2) throw new Error('journal copy failed');
    },
    sealed: () => undefined,
  };
  const open = new RecordBatch({ overhead: (n) => 2 + n, framing: null });
  const handedOn: SealedBatch[] = [];
  const admission = new Admission(
    { maxBatchBytes: 150, maxBatchAgeMillis: 60_000, times: false },
    { open, budget, owner, journal, onSealed: (b) => handedOn.push(b), appendFailed() {} },
  );
  const first = await admission.accept({ record: Buffer.alloc(100), points: 3, inputs });
  expect(first.code).toBe(ExportResultCode.SUCCESS);
  // 100 + 100 > 150: the first batch is sealed before the second record goes in.
  await admission.accept({ record: Buffer.alloc(100), points: 4, inputs }).catch(() => {});
  const [sealed] = budget.batchesOf(owner);
  expect(sealed?.points).toBe(3);
  // Handed on to be prepared, not left in the budget where nothing prepares it.
  expect(handedOn).toEqual([sealed]);
  await admission.sealNow();
});
