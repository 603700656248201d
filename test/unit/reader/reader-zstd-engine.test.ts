import { createRequire } from 'node:module';
import { describe, expect, test } from 'vitest';
import {
  findZstdEngine,
  type ZstdEngine,
  ZstdUnavailableError,
} from '../../../src/compression/zstd-engine.js';
import { ObjectTooLargeError } from '../../../src/reader/read-limits.js';
import { type ZstdDecompress, zstdDecompressor } from '../../../src/reader/zstd-decompress.js';
import { prng } from '../../support/prng.js';
import { builtInZstd, zstdCompress } from '../../support/zstd.js';

const addon = () => createRequire(import.meta.url)('zstd-napi/binding');
const engines: ZstdEngine[] = ['node:zlib', 'zstd-napi'];
const engine = (name: ZstdEngine): { decompress: ZstdDecompress } => ({
  decompress: zstdDecompressor(name),
});
const MiB = 1024 * 1024;
const frame = (text: string | Buffer) => zstdCompress(text);

for (const name of engines) {
  // Before Node.js 22.15 (the Node 20 leg) node:zlib has no zstd: there is no such engine to test.
  const missing = name === 'node:zlib' && !builtInZstd;
  describe.skipIf(missing)(`the reader's zstd decompressor on ${name}`, () => {
    test('decodes every frame of a stream of several (node:zlib alone stops after the first)', () => {
      const bytes = Buffer.concat([frame('{"a":'), frame('1}'), frame('\n')]);
      expect(engine(name).decompress(bytes, MiB).toString()).toBe('{"a":1}\n');
    });

    test('stops with ObjectTooLargeError past maxBytes: a bomb 64 times its limit', () => {
      const bomb = frame(Buffer.alloc(64 * MiB));
      expect(bomb.length).toBeLessThan(64 * 1024);
      const error = (() => {
        try {
          engine(name).decompress(bomb, MiB);
        } catch (e) {
          return e;
        }
      })();
      expect(error).toBeInstanceOf(ObjectTooLargeError);
      expect(error).toMatchObject({ limit: 'maxDecompressedBytes', max: MiB });
      // Exactly at the limit is allowed; across frames the limit is for the whole stream.
      expect(engine(name).decompress(frame(Buffer.alloc(MiB)), MiB)).toHaveLength(MiB);
      const twoHalves = Buffer.concat([
        frame(Buffer.alloc(MiB / 2)),
        frame(Buffer.alloc(MiB / 2 + 1)),
      ]);
      expect(() => engine(name).decompress(twoHalves, MiB)).toThrow(ObjectTooLargeError);
    });

    test('stops as soon as the output passes maxBytes, before the end of the stream', () => {
      // A checksum mismatch at the very end: only a decoder that went on to the end sees it.
      const checked = zstdCompress(Buffer.alloc(4 * MiB), 3, { checksum: true });
      checked.writeUInt32LE(checked.readUInt32LE(checked.length - 4) ^ 1, checked.length - 4);
      expect(() => engine(name).decompress(checked, 8 * MiB)).toThrow(/checksum/i);
      expect(() => engine(name).decompress(checked, MiB)).toThrow(ObjectTooLargeError);
    });

    test('small frames one after another (Parquet pages): each decoded whole, errors and limits kept', () => {
      const random = prng(7);
      const texts = Array.from({ length: 300 }, (_, i) =>
        Buffer.from(
          Array.from({ length: 1 + Math.floor(random() * 9000) }, () =>
            Math.floor(random() * (i % 3 === 0 ? 4 : 256)),
          ),
        ),
      );
      const decompress = engine(name).decompress;
      const bad = zstdCompress(Buffer.alloc(3000, 7), 3, { checksum: true });
      bad.writeUInt32LE((bad.readUInt32LE(bad.length - 4) ^ 1) >>> 0, bad.length - 4);
      for (const [i, text] of texts.entries()) {
        const f = frame(text);
        // At the exact size, with room to spare, and one byte short of it.
        expect(decompress(f, text.length).equals(text)).toBe(true);
        expect(decompress(f, text.length + 100).equals(text)).toBe(true);
        expect(() => decompress(f, text.length - 1 || 1)).toThrow(
          text.length > 1 ? ObjectTooLargeError : Error,
        );
        if (i % 50 === 0) {
          expect(() => decompress(bad, MiB)).toThrow(/checksum/i);
          expect(() => decompress(f.subarray(0, f.length - 1), MiB)).toThrow();
        }
      }
    });

    test('a truncated frame or trailing garbage is an error, and the next object still decodes', () => {
      const good = frame('x'.repeat(1000));
      expect(() => engine(name).decompress(good.subarray(0, good.length - 3), MiB)).toThrow();
      expect(() =>
        engine(name).decompress(Buffer.concat([good, Buffer.from('garbage!')]), MiB),
      ).toThrow();
      expect(engine(name).decompress(good, MiB).toString()).toBe('x'.repeat(1000));
    });
  });
}

describe('one engine choice and one error (src/compression/zstd-engine.ts)', () => {
  const requireError = Object.assign(
    new Error(
      "Cannot find module 'zstd-napi/binding'\nRequire stack:\n- /app/node_modules/otel-s3-exporter/dist/compression/zstd-engine.js",
    ),
    { code: 'MODULE_NOT_FOUND' },
  );

  test('without either engine: what is missing and every fix, without the require stack', () => {
    const found = findZstdEngine({
      builtin: false,
      loadAddon: () => {
        throw requireError;
      },
      nodeVersion: 'v20.20.2',
    });
    expect(found).toBeInstanceOf(ZstdUnavailableError);
    expect((found as ZstdUnavailableError).code).toBe('ERR_ZSTD_UNAVAILABLE');
    expect((found as Error).message).toBe(
      'zstd needs Node.js 22.15 or later (zstd in node:zlib) or the zstd-napi addon: this is ' +
        'Node.js v20.20.2 and the zstd-napi addon is not installed. Fix it with one of: run on ' +
        'Node.js >= 22.15 (24 LTS recommended); install the addon: `npm install zstd-napi` (it ' +
        'builds from source with python3, make and a C++ compiler; if npm skipped its build: ' +
        '`npm install-scripts approve zstd-napi`, then `npm rebuild zstd-napi`); or, ' +
        "to write objects, choose compression: 'gzip'.",
    );
    expect((found as Error).cause).toBe(requireError);
  });

  test('an addon that is there but cannot load (not built) is named with the first line of why', () => {
    const found = findZstdEngine({
      builtin: false,
      loadAddon: () => {
        throw new Error(
          "Cannot find module '/app/node_modules/zstd-napi/build/Release/binding.node'\nRequire stack:\n- /app/node_modules/zstd-napi/binding.js",
        );
      },
      nodeVersion: 'v20.20.2',
    });
    expect((found as Error).message).toContain(
      "the zstd-napi addon could not be loaded (Cannot find module '/app/node_modules/zstd-napi/build/Release/binding.node'). Fix it with one of: run on Node.js >= 22.15 (24 LTS recommended); build the addon: `npm rebuild zstd-napi`",
    );
    expect((found as Error).message).not.toContain('Require stack');
  });

  test('the built-in is preferred: the addon is not even loaded where node:zlib has zstd', () => {
    let loaded = false;
    const found = findZstdEngine({
      builtin: true,
      loadAddon: () => {
        loaded = true;
        return addon();
      },
      nodeVersion: 'v24',
    });
    expect(found).toBe('node:zlib');
    expect(loaded).toBe(false);
  });

  test('without the built-in, the addon where it loads', () => {
    expect(findZstdEngine({ builtin: false, loadAddon: addon, nodeVersion: 'v20' })).toBe(
      'zstd-napi',
    );
  });
});
