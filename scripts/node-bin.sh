#!/usr/bin/env bash
# Prints the bin directory of Node.js MAJOR, installed from the npm registry (the `node` package
# ships the official binary) into a cache directory the first time. No download outside npm.
#   PATH="$(scripts/node-bin.sh 24):$PATH"
set -euo pipefail
MAJOR=${1:?usage: scripts/node-bin.sh MAJOR}
CACHE=${OTEL_S3_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/otel-s3-exporter/node}
DIR="$CACHE/$MAJOR"
BIN="$DIR/node_modules/.bin"
if ! "$BIN/node" --version >/dev/null 2>&1; then
  mkdir -p "$DIR"
  cat > "$DIR/package.json" <<JSON
{ "name": "node$MAJOR-holder", "private": true, "allowScripts": { "node": true } }
JSON
  (cd "$DIR" && npm install --no-audit --no-fund --silent "node@$MAJOR" >&2)
fi
echo "$BIN"
