#!/usr/bin/env bash
# Prints the path of a Python with pyarrow (pinned), made the first time in a virtual environment
# in the project's cache directory (beside scripts/node-bin.sh's Node.js builds). The tests read
# the Parquet files this package writes with it: a cross-check, never a runtime dependency.
# `npm test` runs it itself (test/support/pyarrow-python.ts) unless OTEL_S3_PYARROW_PYTHON names
# a Python with pyarrow; by hand:
#   OTEL_S3_PYARROW_PYTHON="$(bash scripts/python-venv.sh)" npx vitest run test/integration/parquet-writer-engines.test.ts
# OTEL_S3_PYTHON_CACHE: the cache directory. pip uses PIP_INDEX_URL when set, else the machine's
# wheel mirror at /opt/pypi/simple when there is one (CI's machines), else its default index.
# Exit status 3, with one line on stderr: no Python 3 with the venv module here.
set -euo pipefail
PYARROW_VERSION=25.0.1
CACHE=${OTEL_S3_PYTHON_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/otel-s3-exporter/python}
VENV="$CACHE/pyarrow-$PYARROW_VERSION"
has_pyarrow() { "$VENV/bin/python" -c 'import pyarrow' >/dev/null 2>&1; }
if ! has_pyarrow; then
  if ! command -v python3 >/dev/null; then
    echo "python-venv.sh: no python3 on PATH: install Python 3 with its venv module (Debian/Ubuntu: apt-get install python3-venv), or set OTEL_S3_PYARROW_PYTHON to a Python that has pyarrow" >&2
    exit 3
  fi
  if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
    echo "python-venv.sh: $(command -v python3) has no venv module: install it (Debian/Ubuntu: apt-get install python3-venv), or set OTEL_S3_PYARROW_PYTHON to a Python that has pyarrow" >&2
    exit 3
  fi
  mkdir -p "$CACHE"
  # One maker at a time (two test runs may start at once); flock is not everywhere (macOS).
  if command -v flock >/dev/null; then
    exec 9>"$CACHE/.lock"
    flock 9
  fi
  if ! has_pyarrow; then
    if [ -z "${PIP_INDEX_URL:-}" ] && [ -d /opt/pypi/simple ]; then export PIP_INDEX_URL=file:///opt/pypi/simple; fi
    echo "python-venv.sh: making $VENV with pyarrow $PYARROW_VERSION (once; pip index: ${PIP_INDEX_URL:-the default})" >&2
    rm -rf "$VENV"
    python3 -m venv "$VENV" >&2
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "pyarrow==$PYARROW_VERSION" >&2
  fi
fi
echo "$VENV/bin/python"
