import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import {
  devEnvProblem,
  missingPlatformPackages,
  satisfies,
} from '../../../scripts/check-dev-env.mjs';
import { pyarrowFromVenvRun } from '../../support/pyarrow-python.js';

/**
 * `npm test`'s first step (scripts/check-dev-env.mjs, the `pretest` script) and what the global
 * setup makes of scripts/python-venv.sh: a fresh clone's `npm test` either runs or stops at once
 * with one line that says what to do.
 */

const root = new URL('../../../', import.meta.url);
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as {
  devEngines: { runtime: { name: string; version: string } };
};
const nvmrc = readFileSync(new URL('.nvmrc', root), 'utf8').trim();

describe('satisfies: npm version ranges, as the semver rules read them', () => {
  // [version, range, satisfied]: each row worked out by hand from npm's semver rules (`^` keeps
  // the major, a partial version stands for all its patches, `||` is any, a space is all).
  const table: [string, string, boolean][] = [
    ['v20.20.2', '>=22.15.0', false],
    ['v22.14.9', '>=22.15.0', false],
    ['v22.15.0', '>=22.15.0', true],
    ['v24.21.0', '>=22.15.0', true],
    ['v22.15.0', '>= 22', true],
    ['v20.20.2', '>= 22', false],
    ['v23.1.0', '^22||^24||>=26', false],
    ['v24.0.0', '^22.13||^24||>=26', true],
    ['v22.12.0', '^22.13||^24||>=26', false],
    ['v26.1.0', '^22.13||^24||>=26', true],
    ['v20.19.0', '^20.19.0 || >=22.12.0', true],
    ['v21.7.0', '^20.19.0 || >=22.12.0', false],
    ['v22.1.0', '>22', false],
    ['v23.0.0', '>22', true],
    ['v22.9.9', '<=22', true],
    ['v23.0.0', '<=22', false],
    ['v14.18.0', '>=16 || 14 >=14.17', true],
    ['v14.16.0', '>=16 || 14 >=14.17', false],
    ['v15.0.0', '>=16 || 14 >=14.17', false],
    ['v11.0.0', '10.* || >= 12.*', false],
    ['v12.0.0', '10.* || >= 12.*', true],
    ['v14.17.0', '~14.17.0', true],
    ['v14.18.0', '~14.17.0', false],
    ['v0.1.0', '*', true],
  ];
  test.each(table)('%s in %s: %s', (version, range, want) => {
    expect(satisfies(version, range)).toBe(want);
  });

  test('a range of another form is an error that names it, never a guess', () => {
    expect(() => satisfies('v24.0.0', '1.2.3 - 2.3.4')).toThrow(/"-"/);
  });
});

describe("the development runtime: package.json's devEngines and .nvmrc", () => {
  test('node, from 22.15 on (node:zlib zstd; the dev dependencies need it); .nvmrc names Node.js 24, within it', () => {
    expect(pkg.devEngines.runtime.name).toBe('node');
    expect(satisfies('v22.15.0', pkg.devEngines.runtime.version)).toBe(true);
    expect(satisfies('v22.14.0', pkg.devEngines.runtime.version)).toBe(false);
    expect(satisfies('v20.20.2', pkg.devEngines.runtime.version)).toBe(false);
    expect(nvmrc).toBe('24');
    expect(satisfies(`v${nvmrc}.0.0`, pkg.devEngines.runtime.version)).toBe(true);
  });
});

describe('devEnvProblem: the one line npm test stops with', () => {
  const ready = { devRange: '>=22.15.0', nodeMajor: '24', installed: true, missing: [] };

  test('Node.js 20: names the runtime needed and the command that brings it, with the reinstall', () => {
    const line = devEnvProblem({ ...ready, version: 'v20.20.2' });
    expect(line).toBe(
      'npm test needs Node.js >=22.15.0 for development (this is v20.20.2): run export PATH="$(bash scripts/node-bin.sh 24):$PATH" && npm install && npm test',
    );
    // The same on a fresh clone, where nothing is installed yet.
    expect(devEnvProblem({ ...ready, version: 'v20.20.2', installed: false })).toBe(line);
  });

  test("the command it names runs every command after it on .nvmrc's Node.js, not only the first", () => {
    const line = devEnvProblem({ ...ready, version: 'v20.20.2' }) ?? '';
    const command = line.slice(line.indexOf(': run ') + ': run '.length);
    // The Node.js first on PATH before it answers 'stale'; npm's two commands stand in as two probes.
    const stale = mkdtempSync(join(tmpdir(), 'otel-s3-stale-node-'));
    try {
      writeFileSync(
        join(stale, 'node'),
        `#!/bin/sh\nSTALE_NODE=1 exec ${JSON.stringify(process.execPath)} "$@"\n`,
        { mode: 0o755 },
      );
      const probe = `node -p "process.env.STALE_NODE ? 'stale' : process.versions.node"`;
      const out = execFileSync(
        'bash',
        ['-c', command.replace('npm install && npm test', `${probe} && ${probe}`)],
        {
          cwd: fileURLToPath(root),
          env: { ...process.env, PATH: `${stale}:${process.env.PATH}` },
          encoding: 'utf8',
        },
      );
      expect(
        out
          .trim()
          .split('\n')
          .map((v) => v.split('.')[0]),
      ).toEqual([nvmrc, nvmrc]);
    } finally {
      rmSync(stale, { recursive: true, force: true });
    }
  }, 120_000);

  test('no node_modules: npm install first', () => {
    expect(devEnvProblem({ ...ready, version: 'v24.21.0', installed: false })).toBe(
      'npm test needs the development dependencies: run npm install && npm test',
    );
  });

  test('a node_modules installed by another Node.js: names what it lacks, and npm install', () => {
    expect(
      devEnvProblem({ ...ready, version: 'v24.21.0', missing: ['nodejs-polars-linux-x64-gnu'] }),
    ).toBe(
      'node_modules lacks nodejs-polars-linux-x64-gnu (installed by another Node.js?): run npm install && npm test',
    );
  });

  test('a supported runtime with everything installed: nothing to say', () => {
    expect(devEnvProblem({ ...ready, version: 'v22.15.0' })).toBeUndefined();
    expect(devEnvProblem({ ...ready, version: 'v24.21.0' })).toBeUndefined();
  });
});

describe('missingPlatformPackages: what npm installs for this platform and runtime, and node_modules lacks', () => {
  // Entries as package-lock.json holds them for nodejs-polars 0.25.2 (its native packages
  // declare Node >= 22, so npm skips them on Node 20: the fresh clone's `Cannot find module
  // 'nodejs-polars-linux-x64-gnu'`) and for biome's (no engines).
  const locked = {
    '': { name: 'otel-s3-exporter' },
    'node_modules/nodejs-polars': { engines: { node: '>= 20' } },
    'node_modules/nodejs-polars-linux-x64-gnu': {
      optional: true,
      os: ['linux'],
      cpu: ['x64'],
      libc: ['glibc'],
      engines: { node: '>= 22' },
    },
    'node_modules/nodejs-polars-linux-x64-musl': {
      optional: true,
      os: ['linux'],
      cpu: ['x64'],
      libc: ['musl'],
      engines: { node: '>= 22' },
    },
    'node_modules/nodejs-polars-darwin-arm64': {
      optional: true,
      os: ['darwin'],
      cpu: ['arm64'],
      engines: { node: '>= 22' },
    },
    'node_modules/@biomejs/cli-linux-x64': { optional: true, os: ['linux'], cpu: ['x64'] },
    'node_modules/some-tool/node_modules/fsevents': { optional: true, os: ['darwin'] },
    'node_modules/optional-but-portable': { optional: true },
  };
  const linux = { platform: 'linux', arch: 'x64', libc: 'glibc', version: 'v24.21.0' };
  const nothing = () => false;
  const everything = () => true;

  test("Linux x64 glibc, Node 24, none installed: the glibc packages, not musl's or macOS's", () => {
    expect(missingPlatformPackages(locked, linux, nothing)).toEqual([
      'nodejs-polars-linux-x64-gnu',
      '@biomejs/cli-linux-x64',
    ]);
  });

  test('musl: the musl package instead', () => {
    expect(missingPlatformPackages(locked, { ...linux, libc: 'musl' }, nothing)).toEqual([
      'nodejs-polars-linux-x64-musl',
      '@biomejs/cli-linux-x64',
    ]);
  });

  test('Node 20: npm skips the packages whose engines exclude it, so they are not missing', () => {
    expect(missingPlatformPackages(locked, { ...linux, version: 'v20.20.2' }, nothing)).toEqual([
      '@biomejs/cli-linux-x64',
    ]);
  });

  test('macOS arm64: its own package, a nested one by its name', () => {
    expect(
      missingPlatformPackages(
        locked,
        { platform: 'darwin', arch: 'arm64', libc: undefined, version: 'v24.0.0' },
        nothing,
      ),
    ).toEqual(['nodejs-polars-darwin-arm64', 'fsevents']);
  });

  test('all installed: nothing missing; the lookup asks for lockfile paths', () => {
    const asked: string[] = [];
    expect(
      missingPlatformPackages(locked, linux, (path) => {
        asked.push(path);
        return everything();
      }),
    ).toEqual([]);
    expect(asked).toEqual([
      'node_modules/nodejs-polars-linux-x64-gnu',
      'node_modules/@biomejs/cli-linux-x64',
    ]);
  });
});

describe("the pyarrow test's Python, from a run of scripts/python-venv.sh", () => {
  const noPython = {
    code: 3,
    stdout: '',
    stderr:
      'python-venv.sh: no python3 on PATH: install Python 3 with its venv module (Debian/Ubuntu: apt-get install python3-venv), or set OTEL_S3_PYARROW_PYTHON to a Python that has pyarrow\n',
  };

  test('made or found: its path', () => {
    expect(
      pyarrowFromVenvRun({ code: 0, stdout: '/c/pyarrow-25.0.1/bin/python\n', stderr: '' }, true),
    ).toEqual({ python: '/c/pyarrow-25.0.1/bin/python' });
  });

  test('no Python 3: skipped with the reason outside CI, a failure in CI; one line either way', () => {
    const reason =
      'pyarrow test: no python3 on PATH: install Python 3 with its venv module (Debian/Ubuntu: apt-get install python3-venv), or set OTEL_S3_PYARROW_PYTHON to a Python that has pyarrow';
    expect(pyarrowFromVenvRun(noPython, false)).toEqual({ unavailable: reason, skip: true });
    expect(pyarrowFromVenvRun(noPython, true)).toEqual({ unavailable: reason, skip: false });
  });

  test("pip's failure: the test fails everywhere, with pip's last line", () => {
    const pip = {
      code: 1,
      stdout: '',
      stderr:
        'python-venv.sh: making /c/pyarrow-25.0.1 with pyarrow 25.0.1 (once; pip index: the default)\nERROR: Could not find a version that satisfies the requirement pyarrow==25.0.1\n',
    };
    expect(pyarrowFromVenvRun(pip, false)).toEqual({
      unavailable:
        'pyarrow test: bash scripts/python-venv.sh could not make its venv (exit status 1): ERROR: Could not find a version that satisfies the requirement pyarrow==25.0.1',
      skip: false,
    });
  });
});
