import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { satisfies } from '../../scripts/check-dev-env.mjs';

/**
 * The development runtime that package.json's devEngines states (and scripts/check-dev-env.mjs
 * enforces before `npm test`) is one every locked dependency accepts: from its lowest version
 * on, npm installs every package of package-lock.json, and none is skipped for its engines, as
 * nodejs-polars's native package (Node >= 22) was on the Node 20 a fresh clone once had. Here,
 * not in test/unit: the legacy leg's copy (scripts/test-leg.sh) drops the lockfile.
 */
test("every package in package-lock.json accepts the development runtime's lowest version and .nvmrc's", () => {
  const root = new URL('../../', import.meta.url);
  const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as {
    devEngines: { runtime: { version: string } };
  };
  const lock = JSON.parse(readFileSync(new URL('package-lock.json', root), 'utf8')) as {
    packages: Record<string, { engines?: { node?: string } }>;
  };
  const floor = /^>=\s*v?(\d+\.\d+\.\d+)$/.exec(pkg.devEngines.runtime.version)?.[1];
  expect(floor, `devEngines.runtime.version ${pkg.devEngines.runtime.version}`).toBeDefined();
  const nvmrc = readFileSync(new URL('.nvmrc', root), 'utf8').trim();
  for (const version of [`v${floor}`, `v${nvmrc}.0.0`]) {
    const refused = Object.entries(lock.packages)
      .filter(([, p]) => p.engines?.node !== undefined && !satisfies(version, p.engines.node))
      .map(([path, p]) => `${path} (${p.engines?.node})`);
    expect(refused, `packages whose engines refuse Node.js ${version}`).toEqual([]);
  }
});
