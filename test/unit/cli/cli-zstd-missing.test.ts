import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, expect, test, vi } from 'vitest';
import { readMetrics, type UnreadableObject } from '../../../src/reader.js';
import { lines, runCliInProcess } from '../../support/cli-child.js';
import { FakeS3 } from '../../support/fake-s3-client.js';
import {
  collect,
  encodeObject,
  keyAt,
  sampleMetrics,
  writeAtKey,
} from '../../support/reader-fixtures.js';
import { makeTempDir, removeDir } from '../../support/temp-dir.js';

// Node.js 20 without the addon: no zstd in node:zlib, and requiring the addon fails as it
// does there, with a require stack. The seam is findZstdEngine's sources; the rest is real.
vi.mock('../../../src/compression/zstd-engine.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../../src/compression/zstd-engine.js')>();
  const missing = real.findZstdEngine({
    builtin: false,
    loadAddon: () => {
      throw Object.assign(
        new Error(
          "Cannot find module 'zstd-napi/binding'\nRequire stack:\n- /app/node_modules/otel-s3-exporter/dist/reader/zstd-engine.js",
        ),
        { code: 'MODULE_NOT_FOUND' },
      );
    },
    nodeVersion: 'v20.20.2',
  });
  return { ...real, zstdEngine: () => missing };
});

const MESSAGE =
  'zstd needs Node.js 22.15 or later (zstd in node:zlib) or the zstd-napi addon: this is ' +
  'Node.js v20.20.2 and the zstd-napi addon is not installed. Fix it with one of: run on ' +
  'Node.js >= 22.15 (24 LTS recommended); install the addon: `npm install zstd-napi` (it builds ' +
  'from source with python3, make and a C++ compiler; if npm skipped its build: ' +
  '`npm install-scripts approve zstd-napi`, then `npm rebuild zstd-napi`); or, to write ' +
  "objects, choose compression: 'gzip'.";

let root: string;
const zst: string[] = [];
const gz: string[] = [];
beforeAll(async () => {
  root = await makeTempDir('otel-s3-no-zstd-');
  const rm1 = await sampleMetrics('svc');
  for (let i = 0; i < 6; i++) {
    const zstd = i % 2 === 0;
    const key = keyAt(
      'p',
      new Date(Date.UTC(2026, 10, 30, 4, 0, i)),
      zstd ? '.json.zst' : '.json.gz',
    );
    (zstd ? zst : gz).push(key);
    await writeAtKey(root, key, encodeObject(rm1, 'otlp-json', zstd ? 'zstd' : 'gzip'));
  }
  return () => removeDir(root);
});

test('otel-s3 says once that zstd needs Node.js 22.15 or the addon, how to install it, no require stack', async () => {
  const { code, stdout, stderr } = await runCliInProcess(
    ['points', '--dir', '.', '--prefix', 'p'],
    {
      cwd: root,
    },
  );
  expect(code).toBe(1);
  expect(lines(stdout)).toHaveLength(6 * gz.length);
  expect(lines(stderr)).toEqual([
    `otel-s3: cannot read .zst objects, skipping them: ${MESSAGE}`,
    'otel-s3: 3 objects of 6 objects could not be read and were skipped (see above)',
  ]);
  expect(stderr).not.toContain('Require stack');
});

test('readMetrics counts each .zst object unreadable with that reason, without downloading it', async () => {
  const s3 = new FakeS3();
  for (const key of [...zst, ...gz]) s3.put(key, await readFile(join(root, key)));
  const problems: UnreadableObject[] = [];
  const stream = readMetrics({
    bucket: 'b',
    prefix: 'p',
    s3Client: s3.asClient(),
    onError: (p) => problems.push(p),
  });
  const read = await collect(stream);
  expect(read.map((o) => o.key)).toEqual(gz);
  expect(s3.getCalls).toEqual(gz);
  expect(problems.map((p) => [p.key, p.stage, p.error.message])).toEqual(
    zst.map((key) => [key, 'decompress', `${key}: ${MESSAGE}`]),
  );
  expect(stream.stats).toMatchObject({ objects: 6, objectsRead: 3, objectsUnreadable: 3 });
});
