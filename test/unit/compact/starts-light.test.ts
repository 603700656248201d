/**
 * `otel-s3 compact` and its worker start without the S3 client or an OpenTelemetry SDK: each
 * is about 0.1 s of module loading on both threads, a fifth of a run with little to do. They are
 * reached by import() where a bucket is opened. This follows the static imports that are kept at
 * run time (not `import type`, not import()) from each entry through src/.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, test } from 'vitest';

const SRC = resolve(import.meta.dirname, '../../../src');
const HEAVY = /^(@aws-sdk\/|@smithy\/|@opentelemetry\/sdk-)/;

/** The specifiers a module loads when it loads (type-only imports are erased). */
function runtimeImports(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  const found: string[] = [];
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement)) {
      const clause = statement.importClause;
      if (clause?.isTypeOnly) continue;
      const named = clause?.namedBindings;
      const onlyTypes =
        clause !== undefined &&
        clause.name === undefined &&
        named !== undefined &&
        ts.isNamedImports(named) &&
        named.elements.length > 0 &&
        named.elements.every((e) => e.isTypeOnly);
      if (!onlyTypes) found.push((statement.moduleSpecifier as ts.StringLiteral).text);
    } else if (ts.isExportDeclaration(statement) && statement.moduleSpecifier !== undefined) {
      if (statement.isTypeOnly) continue;
      const named = statement.exportClause;
      if (
        named !== undefined &&
        ts.isNamedExports(named) &&
        named.elements.length > 0 &&
        named.elements.every((e) => e.isTypeOnly)
      ) {
        continue;
      }
      found.push((statement.moduleSpecifier as ts.StringLiteral).text);
    }
  }
  return found;
}

/** Chains from `entry` to a heavy package, one per package reached. */
function heavyChains(entry: string): string[] {
  const chains: string[] = [];
  const seen = new Set<string>();
  const visit = (file: string, chain: string[]) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const spec of runtimeImports(file)) {
      const path = [...chain, spec];
      if (HEAVY.test(spec)) chains.push(path.join(' → '));
      else if (spec.startsWith('.')) {
        const ts = resolve(dirname(file), spec.replace(/\.js$/, '.ts'));
        visit(existsSync(ts) ? ts : resolve(dirname(file), spec), [...chain, spec]);
      }
    }
  };
  visit(join(SRC, entry), [entry]);
  return chains;
}

describe('the compactor starts light', () => {
  test.each(['compact/compact-worker.ts', 'cli/commands/compact.ts', 'cli/main.ts'])(
    '%s loads no S3 client and no OpenTelemetry SDK',
    (entry) => {
      expect(heavyChains(entry)).toEqual([]);
    },
  );

  test('the walk sees them where they are loaded', () => {
    expect(heavyChains('compact/store.ts').join('\n')).toMatch(/@aws-sdk\/client-s3/);
    expect(heavyChains('signals/metrics/temporality.ts').join('\n')).toMatch(
      /@opentelemetry\/sdk-metrics/,
    );
  });
});
