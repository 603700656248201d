#!/usr/bin/env bash
# A secondary leg of the compatibility matrix: the unit suite and the end-to-end file against the
# real S3 server (S3_ENDPOINT and keys in the environment), plus any test files given after the
# line, on another Node.js major and, optionally, another OpenTelemetry JS line ('' for none).
#   scripts/test-leg.sh 22              Node 22 with the repository's own dependencies (OTel 3.x)
#   scripts/test-leg.sh 20 otel-2x      Node 20 in a copy with .ci/otel-2x.json's versions
#   scripts/test-leg.sh 20 otel-2x test/integration/package.test.ts   ... and the package test
# With a LINE, LEG_DIR=DIR makes the copy in DIR (kept) instead of a temporary directory, and
# LEG_STEP=prepare stops after its install and typecheck; LEG_STEP=test then runs the tests in a
# DIR prepared so (CI prepares the Node 20 copy while the primary runtime's tests run).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MAJOR=${1:?usage: scripts/test-leg.sh NODE_MAJOR [LINE] [TEST_FILE...]}
LINE=${2:-}
EXTRA=("${@:3}")
if [ "$(node -p 'process.versions.node.split(".")[0]')" = "$MAJOR" ]; then
  BIN=$(dirname "$(command -v node)")
else
  BIN=$(bash "$ROOT/scripts/node-bin.sh" "$MAJOR")
fi
export PATH="$BIN:$PATH"
echo "== Node $(node --version)"
cd "$ROOT"
STEP=${LEG_STEP:-all}
if [ -n "$LINE" ] && [ "$STEP" = test ]; then
  cd "${LEG_DIR:?LEG_STEP=test needs the LEG_DIR that LEG_STEP=prepare made}"
elif [ -n "$LINE" ]; then
  if [ -n "${LEG_DIR:-}" ]; then
    WORK=$LEG_DIR
    mkdir -p "$WORK"
  else
    WORK=$(mktemp -d "${TMPDIR:-/tmp}/otel-s3-leg.XXXXXX")
    trap 'rm -rf "$WORK"' EXIT
  fi
  tar -C "$ROOT" --exclude=./node_modules --exclude=./dist --exclude=./.git -cf - . | tar -C "$WORK" -xf -
  cd "$WORK"
  node -e '
    const fs = require("fs");
    const pkg = JSON.parse(fs.readFileSync("package.json", "utf8"));
    const line = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
    Object.assign(pkg.devDependencies, line.devDependencies);
    fs.writeFileSync("package.json", JSON.stringify(pkg, null, 2) + "\n");
  ' ".ci/$LINE.json"
  rm -f package-lock.json
  npm install --prefer-offline --no-audit --no-fund --engine-strict=false
  npm run typecheck
  [ "$STEP" = prepare ] && exit 0
fi
node -p '"@opentelemetry/sdk-metrics " + require("./node_modules/@opentelemetry/sdk-metrics/package.json").version'
npx vitest run test/unit test/integration/end-to-end.test.ts "${EXTRA[@]}"
