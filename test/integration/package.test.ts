/**
 * The package as users get it: `npm run build`, `npm pack`, and an `npm install` of the tarball
 * (with the OpenTelemetry peers this repository runs on) into a temporary project holding one
 * ES module, one CommonJS, one TypeScript `module: nodenext` (CommonJS) and one TypeScript
 * `moduleResolution: bundler` project (test/fixtures/package-consumers). Each exports a batch to
 * the test S3 server, read back here; the `otel-s3` CLI of both builds lists it too. The
 * README's Quick start and its Traces and logs run there as written (bucket and endpoint
 * replaced): the Quick start prints what the README says, as does the `otel-s3 points` it shows,
 * and `otel-s3 spans` and `logs` read the span and the log record. The ES module and CommonJS
 * services load the exporter alone: no reader, CLI or Parquet module.
 *
 * The install runs as a user's does, with npm's review of install scripts: npm 11 names every
 * dependency with an install script that the project's `allowScripts` does not cover in an
 * `install-scripts` warning, and this package must not be among them (it has no install-time
 * script; the build runs before packing). Nothing in the install has an install script at all:
 * zstd-napi is an optional peer dependency, not installed (an npm without that review gets
 * --ignore-scripts, which then changes nothing). On Node ≥ 22.15 zstd works (the built-in
 * engine); below, compression 'zstd' must fail at construction with the fixes in the message,
 * and works once the user adds the addon as the README says (`npm install zstd-napi`; its build
 * is done here by copying this repository's build of the same version instead of compiling it
 * again: Node-API binaries load on any Node.js major).
 */
import { execFile, spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as zlib from 'node:zlib';
import type { S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { dataPointRows } from '../../src/reader.js';
import { loadedModules, readerOnly } from '../support/loaded-modules.js';
import {
  cliEnvironment,
  decodeStored,
  describeS3,
  freshBucket,
  listAndFetch,
  testClient,
} from '../support/s3.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const FIXTURES = join(ROOT, 'test/fixtures/package-consumers');
const BUILT_IN_ZSTD = typeof (zlib as Record<string, unknown>).zstdCompressSync === 'function';
/** npm ≥ 11's review of install scripts (`allowScripts`): it warns about unreviewed ones. */
const NPM_APPROVES_SCRIPTS = spawnSync('npm', ['install-scripts', '--help']).status === 0;
/** npm, tsc and the consumers each get this long: generous for a loaded 2-core machine. */
const STEP_MILLIS = 120_000;

const exec = promisify(execFile);

interface Ran {
  stdout: string;
  stderr: string;
}

async function run(
  command: string,
  args: string[],
  options: { cwd: string; env?: Record<string, string> },
): Promise<Ran> {
  const env: NodeJS.ProcessEnv = { ...process.env, ...options.env };
  delete env.NODE_OPTIONS; // nothing of the test runner's in the users' processes
  try {
    return await exec(command, args, {
      cwd: options.cwd,
      env,
      timeout: STEP_MILLIS,
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (error) {
    const e = error as Error & Partial<Ran>;
    // tsc --listFiles prints every file it read: only its diagnostics say what failed
    const said = (text = ''): string =>
      text
        .split('\n')
        .filter((line) => !/^\/\S+\.[cm]?[jt]sx?$/.test(line.trim()))
        .join('\n');
    throw new Error(`${command} ${args.join(' ')} failed:\n${said(e.stdout)}\n${said(e.stderr)}`);
  }
}

const node = (args: string[], cwd: string, env?: Record<string, string>) =>
  run(process.execPath, args, { cwd, ...(env === undefined ? {} : { env }) });

/** The version of `name` this repository runs on (the OpenTelemetry line of this CI leg). */
function installedVersion(name: string): string {
  const manifest = join(ROOT, 'node_modules', name, 'package.json');
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
}

/** The last stdout line, parsed. */
function lastJson<T>(ran: Ran): T {
  const lines = ran.stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1] as string) as T;
}

/** The keys `otel-s3 ls --format jsonl` printed. */
function listedKeys(ran: Ran): string[] {
  return ran.stdout
    .trim()
    .split('\n')
    .map((line) => (JSON.parse(line) as { key: string }).key);
}

/**
 * The README's Quick start: its quickstart.mjs, the stats it says that prints, and the table it
 * shows `otel-s3 points` printing (header and row).
 */
function readmeQuickStart(): { script: string; printed: string; header: string; row: string } {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const script = /```js\n(\/\/ quickstart\.mjs\n[\s\S]*?)```/.exec(readme)?.[1];
  const printed =
    script === undefined ? undefined : /console\.log\(.*\); \/\/ (.*)$/m.exec(script)?.[1];
  const table = /\n(time \(UTC\) +resource .*)\n(.*)\n```/.exec(readme);
  if (script === undefined || printed === undefined || table === null) {
    throw new Error('README.md: no Quick start (quickstart.mjs, its output, the points table)');
  }
  return { script, printed, header: table[1] as string, row: table[2] as string };
}

interface ConsumerResult {
  resolved?: string;
  stats?: { batchesUploaded: number };
  error?: { name: string; message: string };
}

let work = '';
let app = '';
let tarball = '';
let packed: string[] = [];
/** What `npm install` of the tarball printed. */
let installed: Ran = { stdout: '', stderr: '' };
let client: S3Client;
let bucket = '';
/** The TypeScript projects' compiles, started together after the install (two cores, two tsc). */
const compiles = new Map<string, Promise<Ran>>();

/** What a user sets to point the exporter (and the CLI) at the test bucket. */
function userEnv(prefix: string, compression = 'zstd'): Record<string, string> {
  return {
    ...cliEnvironment(bucket, prefix),
    OTEL_EXPORTER_S3_COMPRESSION: compression,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
}

/**
 * A README snippet run as the README runs it, as `file` of the ES module project: the test's
 * bucket and server in place of the README's `readmeBucket` at 127.0.0.1:9000, the keys in the
 * environment (`keys`), nothing else of the exporter's. `bin`: the installed otel-s3.
 */
async function runReadmeSnippet(script: string, readmeBucket: string, file: string) {
  const env = userEnv('dev/checkout');
  const endpoint = env.OTEL_EXPORTER_S3_ENDPOINT as string;
  const source = script
    .replace(`bucket: '${readmeBucket}',`, `bucket: '${bucket}',`)
    .replace("endpoint: 'http://127.0.0.1:9000'", `endpoint: '${endpoint}'`);
  expect(source).toContain(bucket);
  expect(source).toContain(endpoint);
  const esm = join(app, 'esm');
  writeFileSync(join(esm, file), source);
  const keys = {
    AWS_ACCESS_KEY_ID: env.AWS_ACCESS_KEY_ID as string,
    AWS_SECRET_ACCESS_KEY: env.AWS_SECRET_ACCESS_KEY as string,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
  const ran = await node([file], esm, keys);
  return { ran, endpoint, esm, keys, bin: join(app, 'node_modules/.bin/otel-s3') };
}

/** The consumer's one object under `package/<name>/`: a .json.zst holding its counter value. */
async function expectExported(name: string): Promise<void> {
  const objects = await listAndFetch(client, bucket, `package/${name}/`);
  expect(objects.map((o) => o.key.slice(o.key.lastIndexOf('.json')))).toEqual(['.json.zst']);
  const rows = dataPointRows(decodeStored(objects[0] as (typeof objects)[number]));
  const point = rows.find((r) => r.metric === 'consumer.exports');
  expect(point?.value).toBe(42);
  expect(point?.attributes.consumer).toBe(name);
}

describeS3('the packed package, installed as users install it', () => {
  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'otel-s3-package-'));
    await run('npm', ['run', 'build'], { cwd: ROOT });
    const pack = await run(
      'npm',
      ['pack', '--ignore-scripts', '--json', '--pack-destination', work],
      {
        cwd: ROOT,
      },
    );
    const [info] = JSON.parse(pack.stdout) as { filename: string; files: { path: string }[] }[];
    if (info === undefined) throw new Error(`npm pack printed no package: ${pack.stdout}`);
    tarball = join(work, info.filename);
    packed = info.files.map((f) => f.path).sort();

    app = join(work, 'app');
    cpSync(FIXTURES, app, { recursive: true });
    writeFileSync(join(app, 'package.json'), '{ "name": "package-test-app", "private": true }\n');
    const peers = [
      '@opentelemetry/api',
      '@opentelemetry/core',
      '@opentelemetry/sdk-metrics',
      '@opentelemetry/resources', // the README's Quick start names the service with it
      '@opentelemetry/sdk-trace', // and its Traces and logs add these two
      '@opentelemetry/sdk-logs',
      '@types/node',
    ].map((name) => `${name}@${installedVersion(name)}`);
    // From npm's cache where it can (this repository's install filled it), the registry if not.
    const blockScripts = NPM_APPROVES_SCRIPTS ? [] : ['--ignore-scripts'];
    installed = await run(
      'npm',
      [
        'install',
        '--prefer-offline',
        ...blockScripts,
        '--no-audit',
        '--no-fund',
        tarball,
        ...peers,
      ],
      { cwd: app },
    );
    for (const name of ['ts-nodenext', 'ts-bundler']) {
      const tsc = [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', '.', '--listFiles'];
      const compiling = node(tsc, join(app, name));
      compiling.catch(() => {}); // reported by the test that awaits it
      compiles.set(name, compiling);
    }
    client = testClient();
    bucket = await freshBucket(client, 'package');
  }, 6 * STEP_MILLIS);

  afterAll(async () => {
    await Promise.allSettled(compiles.values()); // before their directory goes
    client?.destroy();
    if (work !== '') rmSync(work, { recursive: true, force: true });
  });

  test('npm run build leaves the bin executable: `npx otel-s3` in a clone runs it in place', async () => {
    // npx in this repository links the package once and marks its bin executable then; a later
    // build writes dist/cli.js afresh, and the link runs it as a program.
    const ran = await exec(join(ROOT, 'dist/cli.js'), ['--version'], { cwd: ROOT });
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      version: string;
    };
    expect(ran.stdout.trim()).toBe(version);
  });

  test('npm pack ships dist/ (an ESM and a CommonJS build), README.md, LICENSE and package.json only', () => {
    expect(packed.filter((p) => !/^(dist\/|README\.md$|LICENSE$|package\.json$)/.test(p))).toEqual(
      [],
    );
    expect(packed.filter((p) => p.endsWith('.map'))).toEqual([]);
    expect(packed).toEqual(
      expect.arrayContaining([
        'README.md',
        'LICENSE',
        'dist/index.js',
        'dist/index.d.ts',
        'dist/reader.js',
        'dist/reader.d.ts',
        'dist/cli.js',
        'dist/body/body-worker.js',
        'dist/cjs/package.json',
        'dist/cjs/index.js',
        'dist/cjs/index.d.ts',
        'dist/cjs/reader.js',
        'dist/cjs/reader.d.ts',
        'dist/cjs/cli.js',
        'dist/cjs/body/body-worker.js',
      ]),
    );
  });

  test.runIf(NPM_APPROVES_SCRIPTS)(
    'npm install of the tarball asks no approval for this package: it has no install-time script',
    async () => {
      const warnings = `${installed.stdout}\n${installed.stderr}`
        .split('\n')
        .filter((line) => line.includes('install-scripts'));
      // About this package only: another dependency's script is that dependency's business.
      expect(warnings.filter((line) => line.includes('otel-s3-exporter'))).toEqual([]);
      const manifest = JSON.parse(
        readFileSync(join(app, 'node_modules/otel-s3-exporter/package.json'), 'utf8'),
      ) as { scripts?: Record<string, string> };
      const lifecycle = ['preinstall', 'install', 'postinstall', 'prepare'];
      expect(Object.keys(manifest.scripts ?? {}).filter((s) => lifecycle.includes(s))).toEqual([]);
      const review = await run('npm', ['install-scripts', 'ls'], { cwd: app });
      expect(review.stdout).not.toContain('otel-s3-exporter');
    },
  );

  test('a fresh install compiles nothing: no installed package has an install script', () => {
    // What npm runs at install: preinstall, install, postinstall, and `node-gyp rebuild` for a
    // package with a binding.gyp and no install script of its own.
    const withScripts: string[] = [];
    const visit = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        if (!entry.isDirectory() || entry.name === '.bin') continue;
        const path = join(dir, entry.name);
        if (entry.name.startsWith('@')) {
          visit(path);
          continue;
        }
        const manifest = join(path, 'package.json');
        if (!existsSync(manifest)) continue;
        const { scripts = {} } = JSON.parse(readFileSync(manifest, 'utf8')) as {
          scripts?: Record<string, string>;
        };
        const hooks = ['preinstall', 'install', 'postinstall'].filter((s) => s in scripts);
        if (hooks.length > 0 || existsSync(join(path, 'binding.gyp'))) {
          withScripts.push(`${entry.name}: ${hooks.join(', ') || 'binding.gyp'}`);
        }
        if (existsSync(join(path, 'node_modules'))) visit(join(path, 'node_modules'));
      }
    };
    visit(join(app, 'node_modules'));
    expect(withScripts).toEqual([]);
    expect(existsSync(join(app, 'node_modules/zstd-napi'))).toBe(false);
  });

  test('publint and arethetypeswrong find no problem in the tarball', async () => {
    const installed = join(app, 'node_modules/otel-s3-exporter');
    const lint = await node(
      [join(ROOT, 'node_modules/publint/src/cli.js'), installed, '--strict', '--pack', 'false'],
      ROOT,
    );
    expect(lint.stdout).toMatch(/All good!/);
    // Every resolution mode (node10, node16 from CJS and from ESM, bundler) finds types that
    // match the JavaScript it loads; the CLI's own entry is ESM-only by design.
    const attw = await node(
      [
        join(ROOT, 'node_modules/@arethetypeswrong/cli/dist/index.js'),
        tarball,
        '--format',
        'table-flipped',
      ],
      ROOT,
    );
    expect(attw.stdout).toMatch(/No problems found/);
  });

  test.runIf(!BUILT_IN_ZSTD)(
    'Node < 22.15 without the addon: zstd fails at construction, naming the fixes; then the README install makes it work',
    async () => {
      for (const name of ['esm', 'cjs']) {
        const out = lastJson<ConsumerResult>(
          await node(['export.js'], join(app, name), userEnv(`package/${name}-no-zstd`)),
        );
        expect(out.error?.name).toBe('ZstdUnavailableError');
        expect(out.error?.message).toContain('22.15');
        expect(out.error?.message).toContain('npm install zstd-napi');
        expect(out.error?.message).toContain("compression: 'gzip'");
      }
      // The README's step for Node.js 20: `npm install zstd-napi`, the version this repository
      // pins, with its build copied from this repository instead of compiled again (40 s).
      const version = installedVersion('zstd-napi');
      await run(
        'npm',
        [
          'install',
          '--prefer-offline',
          '--ignore-scripts',
          '--no-audit',
          '--no-fund',
          `zstd-napi@${version}`,
        ],
        { cwd: app },
      );
      cpSync(
        join(ROOT, 'node_modules/zstd-napi/build'),
        join(app, 'node_modules/zstd-napi/build'),
        { recursive: true },
      );
    },
  );

  test.runIf(BUILT_IN_ZSTD)(
    'Node ≥ 22.15: zstd-napi is not installed (nothing native to build), and zstd needs it not',
    async () => {
      const addon = await node(
        [
          '-e',
          'try { require("zstd-napi"); console.log("loads") } catch { console.log("absent") }',
        ],
        app,
      );
      expect(addon.stdout.trim()).toBe('absent');
      // Where neither engine exists (simulated), both builds say so at construction.
      for (const name of ['esm', 'cjs']) {
        const out = lastJson<ConsumerResult>(
          await node(
            ['--require', join(ROOT, 'test/support/no-zstd.cjs'), 'export.js'],
            join(app, name),
            userEnv(`package/${name}-no-zstd`),
          ),
        );
        expect(out.error?.name).toBe('ZstdUnavailableError');
      }
    },
  );

  for (const [name, how, build] of [
    ['esm', 'ES module project: import', /\/node_modules\/otel-s3-exporter\/dist\/index\.js$/],
    [
      'cjs',
      'CommonJS project: require()',
      /\/node_modules\/otel-s3-exporter\/dist\/cjs\/index\.js$/,
    ],
  ] as const) {
    test(`${how} loads its build, exports a zstd batch, and loads no reader, CLI or Parquet module`, async () => {
      const { modules, stdout } = await loadedModules([], 'export.js', {
        cwd: join(app, name),
        env: userEnv(`package/${name}`),
      });
      const out = lastJson<ConsumerResult>({ stdout, stderr: '' });
      expect(out.resolved).toMatch(build);
      expect(out.stats?.batchesUploaded).toBe(1);
      await expectExported(name);
      const ours = modules.filter((m) => m.includes('/node_modules/otel-s3-exporter/'));
      expect(ours.some((m) => build.test(m))).toBe(true); // the recorder saw the package load
      expect(modules.filter(readerOnly)).toEqual([]);
    });
  }

  test('the reader is the `otel-s3-exporter/reader` entry, in both builds', async () => {
    const esm = await node(
      [
        '--input-type=module',
        '-e',
        "import('otel-s3-exporter/reader').then((r) => console.log(Object.keys(r).sort().join(',')))",
      ],
      join(app, 'esm'),
    );
    const cjs = await node(
      ['-e', "console.log(Object.keys(require('otel-s3-exporter/reader')).sort().join(','))"],
      join(app, 'cjs'),
    );
    expect(esm.stdout.trim()).toBe(cjs.stdout.trim());
    expect(esm.stdout.trim().split(',')).toEqual(
      expect.arrayContaining([
        'readMetrics',
        'dataPointRows',
        'decodeObject',
        'ZstdUnavailableError',
        'ObjectTooLargeError',
        'compactMetrics',
      ]),
    );
  });

  for (const [name, declarations, runtime] of [
    ['ts-nodenext', 'dist/cjs/index.d.ts', /\/otel-s3-exporter\/dist\/cjs\/index\.js$/],
    ['ts-bundler', 'dist/index.d.ts', /\/otel-s3-exporter\/dist\/index\.js$/],
  ] as const) {
    test(`TypeScript ${name}: typechecks against ${declarations} (type errors where expected), runs, exports`, async () => {
      const dir = join(app, name);
      const tsc = await (compiles.get(name) as Promise<Ran>);
      const ours = tsc.stdout.split('\n').filter((f) => f.includes('/otel-s3-exporter/'));
      expect(ours).toContain(join(app, 'node_modules/otel-s3-exporter', declarations));
      expect(ours.every((f) => f.includes('/dist/cjs/') === name.includes('nodenext'))).toBe(true);
      const out = lastJson<ConsumerResult>(
        await node(['out/export.js'], dir, userEnv(`package/${name}`)),
      );
      expect(out.resolved).toMatch(runtime);
      await expectExported(name);
    });
  }

  test("the README's Quick start, as written: stores its point, and otel-s3 points shows it as the README does", async () => {
    const { script, printed, header, row } = readmeQuickStart();
    const { ran, endpoint, esm, keys, bin } = await runReadmeSnippet(
      script,
      'metrics',
      'quickstart.mjs',
    );
    expect(ran.stdout.trim()).toBe(printed);
    expect(ran.stderr).toBe('');

    const args = ['points', '--endpoint', endpoint, '--bucket', bucket, '--prefix', 'dev/checkout'];
    // A table, as on a terminal (the README's output); the time is the run's.
    const points = await run(bin, [...args, '--format', 'table', '--no-progress'], {
      cwd: esm,
      env: keys,
    });
    const lines = points.stdout.trimEnd().split('\n');
    const time = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}/;
    expect(lines.map((line) => line.trimEnd().replace(time, '<time>'))).toEqual([
      header.trimEnd(),
      row.trimEnd().replace(time, '<time>'),
    ]);
  });

  test("the README's Traces and logs, as written: otel-s3 spans and logs read the span and the log record", async () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('### Traces and logs'));
    const script = /```js\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
    const { ran, endpoint, esm, keys, bin } = await runReadmeSnippet(
      script,
      'telemetry',
      'traces-and-logs.mjs',
    );
    expect([ran.stdout, ran.stderr]).toEqual(['', '']);

    const where = ['--endpoint', endpoint, '--bucket', bucket, '--prefix', 'dev/checkout'];
    const rows = async (command: string) =>
      (
        await run(bin, [command, ...where, '--format', 'jsonl', '--no-progress'], {
          cwd: esm,
          env: keys,
        })
      ).stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    const [span, ...moreSpans] = await rows('spans');
    expect(moreSpans).toEqual([]);
    expect([span?.service, span?.name]).toEqual(['checkout', 'POST /orders']);
    const [log, ...moreLogs] = await rows('logs');
    expect(moreLogs).toEqual([]);
    expect([log?.service, log?.severity, log?.body]).toEqual(['checkout', 'INFO', 'order placed']);
  });

  test('the otel-s3 CLI of each build runs from the installed package and lists the objects', async () => {
    const version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version as string;
    // The bin (the ESM build), from the ES module project.
    const bin = join(app, 'node_modules/.bin/otel-s3');
    const esm = { cwd: join(app, 'esm'), env: userEnv('package/esm') };
    expect((await run(bin, ['--version'], esm)).stdout.trim()).toBe(version);
    const ls = await run(bin, ['ls', '--format', 'jsonl', '--no-progress'], esm);
    expect(listedKeys(ls)).toEqual([expect.stringMatching(/^package\/esm\/.*\.json\.zst$/)]);
    // The CommonJS build's CLI, from the CommonJS project.
    const cli = join(app, 'node_modules/otel-s3-exporter/dist/cjs/cli.js');
    const cjs = join(app, 'cjs');
    const env = userEnv('package/cjs');
    expect((await node([cli, '--version'], cjs, env)).stdout.trim()).toBe(version);
    const listed = await node([cli, 'ls', '--format', 'jsonl', '--no-progress'], cjs, env);
    expect(listedKeys(listed)).toEqual([expect.stringMatching(/^package\/cjs\/.*\.json\.zst$/)]);
  });
});
