import { nodeFileSystem, type SpoolFileSystem } from '../../src/spool/file-system.js';

export type FsOperation =
  | 'mkdir'
  | 'create'
  | 'write'
  | 'fsync'
  | 'close'
  | 'rename'
  | 'syncDirectory'
  | 'unlink'
  | 'readFile'
  | 'readdir';

/** One file-system call, in the order it was made. */
export interface FsCall {
  op: FsOperation;
  path: string;
  /** rename: the new path. syncDirectory: the file last renamed into that directory. */
  to?: string;
  at: number;
}

type Plan = { op: FsOperation; times: number; skip: number } & ({ code: string } | { hang: true });

/**
 * node:fs with injected failures and hangs, recording every call in order:
 * `failNext('fsync', 'EIO')` makes the next fsync fail with EIO; `hangNext('fsync')` makes it
 * never return (until release()). Records every file created, so tests can check a failed file
 * is never used again.
 */
export class FaultyFileSystem implements SpoolFileSystem {
  readonly created: string[] = [];
  readonly calls: FsCall[] = [];
  readonly failures: { op: FsOperation; code: string; path: string; file?: string }[] = [];
  #plan: Plan[] = [];
  #where: (path: string) => boolean = () => true;
  #lastRenamedInto = new Map<string, string>();
  #hung: (() => void)[] = [];

  /** The next `times` calls of `op` fail with `code`, after `skip` calls that succeed. */
  failNext(op: FsOperation, code: string, times = 1, skip = 0): this {
    this.#plan.push({ op, code, times, skip });
    return this;
  }

  /**
   * The planned failures and hangs hit only the paths `where` accepts: calls elsewhere go
   * through, and do not count as the calls a plan skips.
   */
  only(where: (path: string) => boolean): this {
    this.#where = where;
    return this;
  }

  hangNext(op: FsOperation, times = 1, skip = 0): this {
    this.#plan.push({ op, hang: true, times, skip });
    return this;
  }

  /** Lets every hung call go on (so a test can end without leaving promises behind). */
  release(): void {
    for (const go of this.#hung.splice(0)) go();
  }

  get hanging(): number {
    return this.#hung.length;
  }

  async #step(op: FsOperation, path: string, to?: string): Promise<void> {
    this.calls.push({ op, path, ...(to === undefined ? {} : { to }), at: performance.now() });
    if (!this.#where(path)) return;
    const step = this.#plan.find((p) => p.op === op && p.times > 0);
    if (step === undefined) return;
    if (step.skip > 0) {
      step.skip--;
      return;
    }
    step.times--;
    if ('hang' in step) {
      await new Promise<void>((resolve) => this.#hung.push(resolve));
      return;
    }
    this.failures.push({ op, code: step.code, path, ...(to === undefined ? {} : { file: to }) });
    throw Object.assign(new Error(`${step.code}: injected ${op} failure on ${path}`), {
      code: step.code,
    });
  }

  async mkdir(path: string) {
    await this.#step('mkdir', path);
    await nodeFileSystem.mkdir(path);
  }

  async readFile(path: string) {
    await this.#step('readFile', path);
    return nodeFileSystem.readFile(path);
  }

  async readdir(path: string) {
    await this.#step('readdir', path);
    return nodeFileSystem.readdir(path);
  }

  async unlink(path: string) {
    await this.#step('unlink', path);
    await nodeFileSystem.unlink(path);
  }

  async create(path: string) {
    await this.#step('create', path);
    this.created.push(path);
    const handle = await nodeFileSystem.create(path);
    return {
      write: async (parts: readonly Buffer[]) => {
        // A failing write may still leave part of the data behind, as a full disk does.
        const first = parts[0];
        try {
          await this.#step('write', path);
        } catch (error) {
          if (first !== undefined)
            await handle.write([first.subarray(0, Math.ceil(first.length / 2))]);
          throw error;
        }
        await handle.write(parts);
      },
      sync: async () => {
        await this.#step('fsync', path);
        await handle.sync();
      },
      close: async () => {
        this.calls.push({ op: 'close', path, at: performance.now() });
        await handle.close();
      },
    };
  }

  async rename(from: string, to: string) {
    await this.#step('rename', from, to);
    await nodeFileSystem.rename(from, to);
    this.#lastRenamedInto.set(to.slice(0, to.lastIndexOf('/')), to);
  }

  async syncFile(path: string) {
    await this.#step('fsync', path);
    await nodeFileSystem.syncFile(path);
  }

  async syncDirectory(path: string) {
    await this.#step('syncDirectory', path, this.#lastRenamedInto.get(path));
    await nodeFileSystem.syncDirectory(path);
  }
}
