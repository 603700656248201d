#!/usr/bin/env bash
# The second leg of the compatibility matrix: the test suite on Node 22 (installed from the npm
# registry as the `node` package) with the OpenTelemetry JS 3.x line (.ci/otel-3x.json).
# Needs the same S3 server environment as `npm test` (S3_ENDPOINT and keys in CI).
#   scripts/test-otel3.sh [WORK_DIR]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -ge 1 ]; then WORK=$1; else
  WORK=$(mktemp -d /tmp/otel-s3-otel3.XXXXXX)
  trap 'rm -rf "$WORK"' EXIT
fi
mkdir -p "$WORK/node22" "$WORK/repo"

echo "== Node 22 from the npm registry"
cat > "$WORK/node22/package.json" <<'JSON'
{ "name": "node22-holder", "private": true, "allowScripts": { "node": true } }
JSON
(cd "$WORK/node22" && npm install --no-audit --no-fund --silent node@22)
NODE22_BIN="$WORK/node22/node_modules/.bin"
"$NODE22_BIN/node" --version

echo "== a copy of the repository with the OTel 3.x line"
tar -C "$ROOT" --exclude=./node_modules --exclude=./dist --exclude=./.git -cf - . | tar -C "$WORK/repo" -xf -
cd "$WORK/repo"
node -e '
  const fs = require("fs");
  const pkg = JSON.parse(fs.readFileSync("package.json", "utf8"));
  const line = JSON.parse(fs.readFileSync(".ci/otel-3x.json", "utf8"));
  Object.assign(pkg.devDependencies, line.devDependencies);
  fs.writeFileSync("package.json", JSON.stringify(pkg, null, 2) + "\n");
'
rm -f package-lock.json
# Installed with this machine's Node 20: native addons (zstd-napi) build against its local headers
# and, being Node-API, load unchanged in Node 22.
npm install --no-audit --no-fund --engine-strict=false

echo "== typecheck and tests on $("$NODE22_BIN/node" --version)"
export PATH="$NODE22_BIN:$PATH"
node -e 'const v = JSON.parse(require("fs").readFileSync("node_modules/@opentelemetry/sdk-metrics/package.json", "utf8")).version; console.log("sdk-metrics", v); if (!v.startsWith("3.")) process.exit(1)'
npm run typecheck
npm test
