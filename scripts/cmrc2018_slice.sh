#!/usr/bin/env bash
# CMRC 2018's 40-passage slice (data/cmrc2018_slice, 20 test questions) indexed both ways, the
# LLM-free NLP mode and the LLM mode (one extraction call a passage with the Chinese prompts,
# then summaries and community reports), and the context each retrieval method would show
# the model scored with no answer call: reports/cmrc2018_slice_nlp, reports/cmrc2018_slice_llm.
# Settings in data/cmrc2018_slice/graphrag.toml (the Chinese default embedder for both).
#
#   scripts/cmrc2018_slice.sh            # replays the recorded extraction, summaries, reports
#   CACHE=on scripts/cmrc2018_slice.sh   # records what is missing with the live model (~15 min)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
config=(--config data/cmrc2018_slice/graphrag.toml)
methods=${METHODS:-naive,bm25,hybrid,local,ppr,hipporag}
for mode in nlp llm; do
  .venv/bin/python -m graphrag "${config[@]}" --cache "${CACHE:-replay}" index \
    --input data/cmrc2018_slice/docs --out "output/cmrc2018_slice_$mode" --method "$mode" --quiet
  .venv/bin/python -m graphrag "${config[@]}" --cache replay retrieval \
    --index "output/cmrc2018_slice_$mode" --questions data/cmrc2018_slice/questions.jsonl \
    --methods "$methods" --out "reports/cmrc2018_slice_$mode" --quiet
done
