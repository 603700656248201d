/**
 * `npm run build`: the package's two builds, from the same sources and with no source changes.
 *
 *  - ESM, dist/: plain `tsc -p tsconfig.build.json`, file for file, with .d.ts declarations.
 *  - CommonJS, dist/cjs/: esbuild bundles of the three entry points (the library, the CLI and the
 *    compression worker), marked CommonJS by dist/cjs/package.json. The sources use
 *    `import.meta.url` (to find the worker file, and for createRequire), which CommonJS lacks:
 *    each bundle defines it from __filename (scripts/cjs-import-meta-url.ts), as tsup's shim does. Dependencies stay
 *    external (one copy with the application's), except the ones that ship only ESM, which
 *    `require()` cannot load before Node 20.19 / 22.12: those are bundled in.
 *    Declarations: tsc's, copied beside the bundles, where the CommonJS marker makes TypeScript
 *    read them as CommonJS (what a `require` of the package gets).
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const DIST = join(ROOT, 'dist');
const CJS = join(DIST, 'cjs');
/** The lowest Node.js the package supports (package.json engines). */
const TARGET = 'node20.6';

interface PackageJson {
  type?: string;
  main?: string;
  exports?: unknown;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as PackageJson;

/** True when `require(name)` gets CommonJS: a `require` export condition, or a CommonJS package. */
function loadsWithRequire(name: string): boolean {
  const manifest = JSON.parse(
    readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8'),
  ) as PackageJson;
  if (JSON.stringify(manifest.exports ?? null).includes('"require"')) return true;
  return manifest.type !== 'module' && !/\.mjs$/.test(manifest.main ?? '');
}

/**
 * What the CommonJS bundles require() at run time: the peers (the application's own
 * OpenTelemetry instances), the optional addon, and every dependency that has CommonJS. The
 * ESM-only dependencies are bundled in.
 */
function externals(): { external: string[]; bundled: string[] } {
  const always = [
    ...Object.keys(pkg.peerDependencies ?? {}),
    ...Object.keys(pkg.optionalDependencies ?? {}),
  ];
  const dependencies = Object.keys(pkg.dependencies ?? {});
  const bundled = dependencies.filter((name) => !loadsWithRequire(name));
  return { external: [...always, ...dependencies.filter((n) => !bundled.includes(n))], bundled };
}

/** Copies tsc's declarations (every .d.ts under dist/) into dist/cjs/, same tree. */
function copyDeclarations(): void {
  for (const file of readdirSync(DIST, { recursive: true, encoding: 'utf8' })) {
    if (!file.endsWith('.d.ts') || file.startsWith(`cjs${sep}`)) continue;
    mkdirSync(dirname(join(CJS, file)), { recursive: true });
    copyFileSync(join(DIST, file), join(CJS, file));
  }
}

rmSync(DIST, { recursive: true, force: true });

// 1. ESM: tsc, as before.
execFileSync(
  process.execPath,
  [createRequire(import.meta.url).resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
  { cwd: ROOT, stdio: 'inherit' },
);

// 2. CommonJS bundles.
const { external, bundled } = externals();
await build({
  absWorkingDir: ROOT,
  entryPoints: {
    index: 'src/index.ts',
    cli: 'src/cli.ts',
    // Beside the bundles: body-maker finds it as new URL('./body-worker.js', import.meta.url).
    'body-worker': 'src/compression/body-worker.js',
  },
  outdir: CJS,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: TARGET,
  external,
  define: { 'import.meta.url': 'importMetaUrl' },
  inject: ['scripts/cjs-import-meta-url.ts'],
  logLevel: 'warning',
});
writeFileSync(join(CJS, 'package.json'), `${JSON.stringify({ type: 'commonjs' }, null, 2)}\n`);
copyDeclarations();

console.log(
  `built dist/ (ESM, tsc) and dist/cjs/ (CommonJS, esbuild; bundled because ESM-only: ${bundled.join(', ') || 'none'})`,
);
