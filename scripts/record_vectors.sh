#!/usr/bin/env bash
# Record the vectors the main job embeds: run scripts/demo.sh over an empty vector cache
# (the committed packs are still read first), then add what it embedded to data/vector_cache
# as one new pack. With the vectors recorded, a replay gives the same scores to the last
# digit on every CPU (embeddings.recorded_path in graphrag/settings/__init__.py says why).
# Run it after a change that embeds new texts (a new question set, a changed index), and
# commit the pack beside the LLM cache it goes with.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
GRAPHRAG_EMBEDDINGS__CACHE_PATH="$scratch/vectors.sqlite" bash scripts/demo.sh
.venv/bin/python - "$scratch/vectors.sqlite" <<'PY'
import sys
from pathlib import Path

from graphrag.settings import load_settings
from graphrag.text.embeddings import write_pack

settings = load_settings()
folder = settings.resolve_path(settings.embeddings.recorded_path)
pack = write_pack(folder, Path(sys.argv[1]))
print(f"recorded {pack}" if pack else "no new vectors: every vector the demo embeds is recorded")
PY
