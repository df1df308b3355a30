#!/usr/bin/env bash
# Record (or resume recording) the MuSiQue answers with the live embedded model.
#
# Hours of CPU: every answer is stored in data/llm_cache as it arrives, so an interrupted run
# loses nothing and the next run asks only for what is missing. Commit data/llm_cache as it
# grows. The settings the answers are recorded with are data/musique/graphrag.toml (the NLP
# index needs no LLM: it is rebuilt here from data/musique/docs).
#
#   scripts/record_musique.sh                       # every method, first LIMIT questions
#   METHODS=naive,ppr LIMIT=10 scripts/record_musique.sh
#   METHODS=naive,hyde,multi_query,ppr,local,global,drift,router METRICS=answer_relevancy \
#     scripts/record_musique.sh                   # the RAGAS judge's calls, with controls
#   LLM_INDEX=1 METHODS=none scripts/record_musique.sh  # also the LLM-mode (lean) index
#   METHODS=hipporag,integrate METHOD_LIMITS=hipporag=test,integrate=test \
#     scripts/record_musique.sh                   # costly methods on the test split only
# The judge's planted controls are the ones data/musique/recorded_judge_controls.csv keeps (recorded,
# and replayed by scripts/demo.sh); a metric it has fewer than JUDGE_CONTROLS of gets the
# shortfall drawn (eval.seed) from the run's answers that have a score for it. Record the
# judge's calls on some methods with JUDGE_CONTROLS=0, and new controls by a run whose
# methods and limits give every answer the report scores on METRICS; then add the new rows
# of the run's judge_controls.csv to data/musique/recorded_judge_controls.csv.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
methods=${METHODS:-naive,hyde,multi_query,local,global,drift,ppr}
limit=${LIMIT:-50}
config=(--config data/musique/graphrag.toml)
.venv/bin/python -m graphrag "${config[@]}" index --input data/musique/docs \
  --out output/musique_nlp --quiet
# The same corpus in the LLM mode with the default (lean) pipeline: its extraction, summary
# and report calls are recorded, so scripts/demo.sh rebuilds it in replay and the summary
# shows both index modes' cost (hours live: 58 packed extraction calls, then summaries and
# reports).
if [ "${LLM_INDEX:-0}" = 1 ]; then
  .venv/bin/python -m graphrag --config data/musique/llm_index.toml index \
    --input data/musique/docs --out output/musique_llm --method llm --quiet
fi
[ "$methods" = none ] && exit 0
# RAGAS (METRICS=answer_relevancy, ...) comes with the judge's planted controls (the eval
# default), which the report needs to say whether the judge is informative; faithfulness and
# context recall only on the seeded judge sample scripts/demo.sh replays (JUDGE_SAMPLE=0: all).
.venv/bin/python -m graphrag "${config[@]}" eval --index output/musique_nlp \
  --questions data/musique/questions.jsonl --methods "$methods" --metrics "${METRICS:-none}" \
  --method-limits "${METHOD_LIMITS:-none}" --judge-controls "${JUDGE_CONTROLS:-20}" \
  --judge-sample "${JUDGE_SAMPLE:-$(cat data/musique/recorded_judge_sample)}" \
  --keep-controls data/musique/recorded_judge_controls.csv \
  --out "${OUT:-output/musique_recording}" --limit "$limit" --quiet
