#!/usr/bin/env bash
# Record (or resume recording) the demo's answers on the default settings with the live
# embedded model: the lean index (its extraction, summaries and reports are recorded in
# data/llm_cache, so indexing replays) and every method's answer to the 24 questions.
#
# Hours of CPU: every answer is stored in data/llm_cache as it arrives, so an interrupted run
# loses nothing and the next run asks only for what is missing. Commit data/llm_cache as it
# grows. Methods are recorded one after another so that each finished method is a complete
# column of the report.
#
#   scripts/record_demo.sh                                # every method, all 24 questions
#   METHODS=naive,ppr LIMIT=12 scripts/record_demo.sh
#   METRICS=faithfulness,context_recall scripts/record_demo.sh   # the RAGAS judgements too,
#       method by method, then the planted judge controls of the whole run (CONTROLS=1)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
# ZH=1: the Chinese demo's index with the Chinese prompts (one packed extraction call), its one
# question (data/zh_demo/recorded_question) through naive and local search (two answer calls)
# and its six dev questions (12 answer calls); then the same with the English prompts
# (data/zh_demo/english_prompt.toml: its own index and 12 answers), and nothing else: what
# scripts/demo.sh is to replay once it is recorded (docs/languages.md).
if [ "${ZH:-0}" = 1 ]; then
  .venv/bin/python -m graphrag --cache on index --input data/zh_demo/docs --out output/zh_demo
  .venv/bin/python -m graphrag --cache on query --index output/zh_demo --method naive,local \
    "$(cat data/zh_demo/recorded_question)"
  .venv/bin/python -m graphrag --cache on eval --index output/zh_demo \
    --questions data/zh_demo/questions.jsonl --methods naive,local --metrics none \
    --out output/zh_demo_recording --quiet
  english=(--config data/zh_demo/english_prompt.toml --cache on)
  .venv/bin/python -m graphrag "${english[@]}" index --input data/zh_demo/docs \
    --out output/zh_demo_english
  .venv/bin/python -m graphrag "${english[@]}" eval --index output/zh_demo_english \
    --questions data/zh_demo/questions.jsonl --methods naive,local --metrics none \
    --out output/zh_demo_english_recording --quiet
  exit 0
fi
methods=${METHODS:-naive,local,ppr,global,hyde,multi_query,drift,router}
limit=${LIMIT:-24}
.venv/bin/python -m graphrag index --input data/kestrel_bay/docs --out output/kestrel_bay \
  --gold data/kestrel_bay/gold_graph.json --quiet
for method in ${methods//,/ }; do
  .venv/bin/python -m graphrag eval --index output/kestrel_bay \
    --questions data/kestrel_bay/questions.jsonl --methods "$method" --metrics "${METRICS:-none}" \
    --judge-controls 0 --out "${OUT:-output/kestrel_bay_recording}/$method" --limit "$limit" --quiet
done
# The planted controls are drawn from the whole run's records (eval.seed): recorded once every
# method's judgements are, by the same run scripts/demo.sh replays.
if [ "${CONTROLS:-0}" = 1 ] && [ "${METRICS:-none}" != none ]; then
  .venv/bin/python -m graphrag eval --index output/kestrel_bay \
    --questions data/kestrel_bay/questions.jsonl --methods "$(cat data/kestrel_bay/recorded_methods)" \
    --metrics "$(cat data/kestrel_bay/recorded_metrics)" \
    --pairwise "$(cat data/kestrel_bay/recorded_pairwise)" \
    --out "${OUT:-output/kestrel_bay_recording}/all" --limit "$limit" --quiet
fi
