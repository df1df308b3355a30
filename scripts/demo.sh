#!/usr/bin/env bash
# The main job: set up, index the bundled Kestrel Bay corpus with the embedded model, and
# write the comparison report under reports/kestrel_bay. Recorded LLM responses in
# data/llm_cache make re-runs fast; anything not recorded is asked of the live local model.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
.venv/bin/python -m graphrag index --input data/kestrel_bay/docs --out output/kestrel_bay \
  --gold data/kestrel_bay/gold_graph.json
.venv/bin/python -m graphrag query --index output/kestrel_bay --method all \
  "Who founded the Bluewrack Kelp Company, and where did she work before?"
