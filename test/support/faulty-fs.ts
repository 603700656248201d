import { nodeFileSystem, type SpoolFileSystem } from '../../src/spool/file-system.js';

export type FsOperation = 'create' | 'write' | 'fsync' | 'rename' | 'syncDirectory';

/**
 * node:fs with injected failures: `failNext('fsync', 'EIO')` makes the next fsync fail with EIO.
 * Records every file created, so tests can check a failed file is never used again.
 */
export class FaultyFileSystem implements SpoolFileSystem {
  readonly created: string[] = [];
  readonly failures: { op: FsOperation; code: string; path: string }[] = [];
  #plan: { op: FsOperation; code: string; times: number }[] = [];

  failNext(op: FsOperation, code: string, times = 1): this {
    this.#plan.push({ op, code, times });
    return this;
  }

  #maybeFail(op: FsOperation, path: string): void {
    const step = this.#plan.find((p) => p.op === op && p.times > 0);
    if (step === undefined) return;
    step.times--;
    this.failures.push({ op, code: step.code, path });
    throw Object.assign(new Error(`${step.code}: injected ${op} failure on ${path}`), {
      code: step.code,
    });
  }

  mkdir = nodeFileSystem.mkdir;
  readFile = nodeFileSystem.readFile;
  readdir = nodeFileSystem.readdir;
  unlink = nodeFileSystem.unlink;

  async create(path: string) {
    this.#maybeFail('create', path);
    this.created.push(path);
    const handle = await nodeFileSystem.create(path);
    return {
      write: async (parts: readonly Buffer[]) => {
        // A failing write may still leave part of the data behind, as a full disk does.
        const first = parts[0];
        try {
          this.#maybeFail('write', path);
        } catch (error) {
          if (first !== undefined)
            await handle.write([first.subarray(0, Math.ceil(first.length / 2))]);
          throw error;
        }
        await handle.write(parts);
      },
      sync: async () => {
        this.#maybeFail('fsync', path);
        await handle.sync();
      },
      close: () => handle.close(),
    };
  }

  async rename(from: string, to: string) {
    this.#maybeFail('rename', from);
    await nodeFileSystem.rename(from, to);
  }

  async syncDirectory(path: string) {
    this.#maybeFail('syncDirectory', path);
    await nodeFileSystem.syncDirectory(path);
  }
}
