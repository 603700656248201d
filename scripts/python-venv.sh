#!/usr/bin/env bash
# Prints the path of a Python with pyarrow (pinned), made the first time in a virtual environment
# in the project's cache directory (beside scripts/node-bin.sh's Node.js builds). The tests read
# the Parquet files this package writes with it: a cross-check, never a runtime dependency.
#   OTEL_S3_PYARROW_PYTHON="$(bash scripts/python-venv.sh)" npx vitest run test/integration/parquet-writer-engines.test.ts
# pip uses PIP_INDEX_URL when set (CI points it at a local wheel mirror), else its default index.
set -euo pipefail
PYARROW_VERSION=25.0.1
CACHE=${OTEL_S3_PYTHON_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/otel-s3-exporter/python}
VENV="$CACHE/pyarrow-$PYARROW_VERSION"
if ! "$VENV/bin/python" -c 'import pyarrow' >/dev/null 2>&1; then
  mkdir -p "$CACHE"
  rm -rf "$VENV"
  python3 -m venv "$VENV" >&2
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "pyarrow==$PYARROW_VERSION" >&2
fi
echo "$VENV/bin/python"
