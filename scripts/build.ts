/**
 * `npm run build`: the package's two builds, from the same sources and with no source changes.
 *
 *  - ESM, dist/: plain `tsc -p tsconfig.build.json`, file for file, with .d.ts declarations.
 *  - CommonJS, dist/cjs/: esbuild, file for file as well (the same tree, marked CommonJS by
 *    dist/cjs/package.json), so that `require()` of an entry loads only the files it uses, as
 *    `import` does: the exporter's entry never loads the reader, the CLI or the Parquet modules,
 *    and the modules loaded on demand (`import()`) are files of their own. The sources use
 *    `import.meta.url` (to find the worker file, and for createRequire), which CommonJS lacks:
 *    each file defines it from __filename (scripts/cjs-import-meta-url.ts), as tsup's shim does.
 *    Dependencies stay external (one copy with the application's), except the ones that ship
 *    only ESM, which `require()` cannot load before Node 20.19 / 22.12: each of those is bundled
 *    once into dist/cjs/vendor/, and the files that use it require that copy.
 *    Declarations: tsc's, copied beside the files, where the CommonJS marker makes TypeScript
 *    read them as CommonJS (what a `require` of the package gets).
 */
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const SRC = join(ROOT, 'src');
const DIST = join(ROOT, 'dist');
const CJS = join(DIST, 'cjs');
/** The lowest Node.js the package supports (package.json engines). */
const TARGET = 'node20.6';

interface PackageJson {
  type?: string;
  main?: string;
  exports?: unknown;
  dependencies?: Record<string, string>;
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

/** The dependencies `require()` cannot load (ESM only): bundled into dist/cjs/vendor/. */
function esmOnlyDependencies(): string[] {
  return Object.keys(pkg.dependencies ?? {}).filter((name) => !loadsWithRequire(name));
}

/** The package name of an import path: `a`, `@s/a` from `a/x`, `@s/a/x`. */
function packageOf(path: string): string {
  const parts = path.split('/');
  return (path.startsWith('@') ? parts.slice(0, 2) : parts.slice(0, 1)).join('/');
}

/**
 * Every source file becomes a CommonJS file of its own: its relative imports stay requires of
 * the sibling files, packages stay external, and an ESM-only dependency becomes a require of
 * its copy in dist/cjs/vendor/, relative to the file's place in the tree.
 */
function fileForFile(vendored: string[], inject: string): Plugin {
  return {
    name: 'file-for-file',
    setup(b) {
      b.onResolve({ filter: /.*/ }, (args) => {
        if (args.kind === 'entry-point' || args.path === inject) return undefined;
        if (args.path.startsWith('.')) return { path: args.path, external: true };
        if (!vendored.includes(packageOf(args.path))) return { path: args.path, external: true };
        // A module of the package by its path (hyparquet/src/column.js) has a copy of its own.
        const file = args.path.endsWith('.js') ? args.path : `${args.path}.js`;
        const output = join(CJS, relative(SRC, dirname(args.importer)));
        const copy = relative(output, join(CJS, 'vendor', file))
          .split(sep)
          .join('/');
        return { path: copy.startsWith('.') ? copy : `./${copy}`, external: true };
      });
    },
  };
}

/**
 * What of the vendored packages the sources import: each package, and each module of one that
 * is imported by its path (`hyparquet/src/column.js`), as esbuild entry points (name → path).
 */
function vendoredEntries(vendored: string[]): Record<string, string> {
  const entries: Record<string, string> = Object.fromEntries(vendored.map((name) => [name, name]));
  for (const file of sourceFiles()) {
    for (const [, path] of readFileSync(file, 'utf8').matchAll(
      /^import\s+(?!type\s)[^;]*?from\s+'([^'.][^']*\/[^']*\.js)'/gm,
    )) {
      if (path !== undefined && vendored.includes(packageOf(path))) {
        entries[path.replace(/\.js$/, '')] = path;
      }
    }
  }
  return entries;
}

/** The files of src/ that become files of the package. */
function sourceFiles(): string[] {
  return readdirSync(SRC, { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.(ts|js)$/.test(f) && !f.endsWith('.d.ts'))
    .map((f) => join(SRC, f));
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

// The bin, executable: npx in this repository runs it in place, through a link it marked
// executable once; tsc's fresh file would answer EACCES.
chmodSync(join(DIST, 'cli.js'), 0o755);

// 2. CommonJS, file for file, and the ESM-only dependencies bundled once each.
const vendored = esmOnlyDependencies();
const inject = join(ROOT, 'scripts/cjs-import-meta-url.ts');
await build({
  absWorkingDir: ROOT,
  entryPoints: sourceFiles(),
  outbase: SRC,
  outdir: CJS,
  // "Bundling" one file at a time: every import is external (the plugin), and only the
  // import.meta.url shim is put in.
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: TARGET,
  define: { 'import.meta.url': 'importMetaUrl' },
  inject: [inject],
  plugins: [fileForFile(vendored, inject)],
  logLevel: 'warning',
});
await build({
  absWorkingDir: ROOT,
  entryPoints: vendoredEntries(vendored),
  outdir: join(CJS, 'vendor'),
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: TARGET,
  // The files that require a vendored copy were ES modules, converted with Node's interop: their
  // default import is `module.exports` itself. So a vendored default export becomes
  // module.exports, with the named exports on it.
  footer: {
    js: "{ const d = module.exports.default; if (typeof d === 'function' || (typeof d === 'object' && d !== null)) module.exports = Object.assign(d, module.exports); }",
  },
  logLevel: 'warning',
});
writeFileSync(join(CJS, 'package.json'), `${JSON.stringify({ type: 'commonjs' }, null, 2)}\n`);
copyDeclarations();

console.log(
  `built dist/ (ESM, tsc) and dist/cjs/ (CommonJS, esbuild, file for file; vendored because ESM-only: ${vendored.join(', ') || 'none'})`,
);
