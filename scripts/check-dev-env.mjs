// `npm test`'s first step (the `pretest` script): stops at once, with one line that says what
// to do, when the tests cannot work here: a Node.js below package.json's devEngines (the
// development runtime; users of the package need only `engines`), no node_modules, or a
// node_modules that lacks a platform package npm would install for this runtime (it was
// installed by another Node.js: nodejs-polars's native package, for one, declares Node >= 22,
// and npm skips an optional package whose engines do not match). Plain JavaScript that needs
// nothing installed: it runs before anything is, on any Node.js.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** @param {string} v '22.15.0', 'v22.15.0' or a partial '22', '22.15' @returns {number[]} */
function parts(v) {
  const m = /^v?(\d+)(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?$/.exec(v.trim());
  if (m === null) throw new Error(`not a version: ${JSON.stringify(v)}`);
  return [m[1], m[2], m[3]].map((p) => (p === undefined || /[xX*]/.test(p) ? -1 : Number(p)));
}

/** @param {number[]} version @param {number[]} want: compared on the parts `want` names */
function compare(version, want) {
  for (let i = 0; i < 3 && want[i] !== -1; i++) {
    const d = (version[i] ?? 0) - (want[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return 0;
}

/**
 * @param {string} comparator e.g. '>=22.15.0', '^24', '20'
 * @returns {(version: number[]) => boolean}
 */
function comparator(comparator) {
  const m = /^(>=|<=|>|<|=|\^|~)?(.+)$/.exec(comparator);
  if (m === null) throw new Error(`not a version comparator: ${JSON.stringify(comparator)}`);
  const op = m[1] ?? '=';
  const want = parts(m[2] ?? '');
  if (op === '>=') return (v) => compare(v, want) >= 0;
  if (op === '>') return (v) => compare(v, want) > 0;
  if (op === '<=') return (v) => compare(v, want) <= 0;
  if (op === '<') return (v) => compare(v, want) < 0;
  if (op === '=') return (v) => compare(v, want) === 0;
  // ^ keeps the major, ~ the major and minor (of a version that names them).
  const kept = op === '^' ? 1 : 2;
  return (v) =>
    compare(v, want) >= 0 && want.slice(0, kept).every((p, i) => p === -1 || v[i] === p);
}

/**
 * Whether a Node.js version satisfies an npm version range of the usual forms: comparators
 * (>=, >, <=, <, ^, ~, exact or partial versions; not `a - b`) joined by spaces (all must hold)
 * and by `||` (any set). Throws on any other form, naming it.
 * @param {string} version e.g. 'v20.20.2'
 * @param {string} range e.g. '>=22.15.0', '^20.19.0 || >=22.12.0'
 */
export function satisfies(version, range) {
  const v = parts(version);
  /** @type {((version: number[]) => boolean)[][]} */
  let sets;
  try {
    sets = range.split('||').map((set) =>
      set
        .trim()
        .replace(/(>=|<=|>|<|=|\^|~)\s+/g, '$1')
        .split(/\s+/)
        .filter((c) => c !== '' && c !== '*' && c !== 'x')
        .map(comparator),
    );
  } catch (error) {
    throw new Error(
      `version range ${JSON.stringify(range)}: ${/** @type {Error} */ (error).message}`,
    );
  }
  return sets.some((set) => set.every((meets) => meets(v)));
}

/**
 * @typedef {object} LockedPackage
 * @property {string} [name]
 * @property {string} [version]
 * @property {boolean} [optional]
 * @property {string[]} [os]
 * @property {string[]} [cpu]
 * @property {string[]} [libc]
 * @property {{ node?: string }} [engines]
 */

/** @param {string[] | undefined} allowed @param {string} value: npm's rule, `!x` excludes x */
function platformMatches(allowed, value) {
  if (allowed === undefined || allowed.length === 0) return true;
  if (allowed.includes(`!${value}`)) return false;
  const positive = allowed.filter((a) => !a.startsWith('!'));
  return positive.length === 0 || positive.includes(value);
}

/**
 * The optional platform packages of the lockfile that npm installs on this platform and runtime,
 * and that node_modules lacks.
 * @param {Record<string, LockedPackage>} lockedPackages package-lock.json's `packages`
 * @param {{ platform: string; arch: string; libc: string | undefined; version: string }} here
 * @param {(path: string) => boolean} installed whether `node_modules/...` (a lockfile key) exists
 * @returns {string[]} their names
 */
export function missingPlatformPackages(lockedPackages, here, installed) {
  const missing = [];
  for (const [path, pkg] of Object.entries(lockedPackages)) {
    if (path === '' || pkg.optional !== true) continue;
    if (pkg.os === undefined && pkg.cpu === undefined && pkg.libc === undefined) continue;
    if (!platformMatches(pkg.os, here.platform) || !platformMatches(pkg.cpu, here.arch)) continue;
    if (pkg.libc !== undefined && here.libc !== undefined && !platformMatches(pkg.libc, here.libc))
      continue;
    const engine = pkg.engines?.node;
    let runs = true;
    try {
      runs = engine === undefined || satisfies(here.version, engine);
    } catch {
      // A range of a form satisfies() does not read: npm decides; assume it installs.
    }
    if (runs && !installed(path)) missing.push(path.slice(path.lastIndexOf('node_modules/') + 13));
  }
  return missing;
}

/**
 * The one line that says why `npm test` cannot run here and what to run instead, or undefined.
 * @param {{ version: string; devRange: string; nodeMajor: string; installed: boolean; missing: string[] }} state
 *   version: this Node.js; devRange: devEngines.runtime.version; nodeMajor: .nvmrc's Node.js;
 *   installed: node_modules has the test runner; missing: missingPlatformPackages()
 */
export function devEnvProblem({ version, devRange, nodeMajor, installed, missing }) {
  if (!satisfies(version, devRange)) {
    return `npm test needs Node.js ${devRange} for development (this is ${version}): run export PATH="$(bash scripts/node-bin.sh ${nodeMajor}):$PATH" && npm install && npm test`;
  }
  if (!installed) return 'npm test needs the development dependencies: run npm install && npm test';
  if (missing.length > 0) {
    return `node_modules lacks ${missing.join(', ')} (installed by another Node.js?): run npm install && npm test`;
  }
  return undefined;
}

/** @returns {string | undefined} 'glibc' or 'musl' on Linux */
function libc() {
  if (process.platform !== 'linux') return undefined;
  const report = /** @type {{ header?: { glibcVersionRuntime?: string } }} */ (
    process.report?.getReport()
  );
  return report?.header?.glibcVersionRuntime ? 'glibc' : 'musl';
}

function main() {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const devRange = pkg.devEngines?.runtime?.version;
  if (typeof devRange !== 'string')
    throw new Error('package.json has no devEngines.runtime.version');
  const nodeMajor = readFileSync(join(root, '.nvmrc'), 'utf8').trim();
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'));
  const installed = existsSync(join(root, 'node_modules', 'vitest', 'package.json'));
  const missing = installed
    ? missingPlatformPackages(
        lock.packages ?? {},
        { platform: process.platform, arch: process.arch, libc: libc(), version: process.version },
        (path) => existsSync(join(root, path, 'package.json')),
      )
    : [];
  const problem = devEnvProblem({
    version: process.version,
    devRange,
    nodeMajor,
    installed,
    missing,
  });
  if (problem !== undefined) {
    console.error(problem);
    process.exitCode = 1;
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) main();
