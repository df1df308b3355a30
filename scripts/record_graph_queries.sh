#!/usr/bin/env bash
# Record (or resume recording) the answers of the graph-query questions
# (data/kestrel_bay/graph_questions.jsonl: counting, aggregation, type filters, 2-3 hop
# paths) with the live embedded model, method by method, so that each finished method is a
# complete column of reports/kestrel_bay_graph_queries (scripts/demo.sh replays it).
#
# Every answer is stored in data/llm_cache as it arrives: an interrupted run loses nothing
# and the next run asks only for what is missing. Commit data/llm_cache as it grows.
#
#   scripts/record_graph_queries.sh                  # cypher, naive, local, hipporag
#   METHODS=cypher scripts/record_graph_queries.sh
#   METHODS=naive METHOD_LIMITS=naive=test scripts/record_graph_queries.sh   # the test split
#       only (the headline's questions): data/kestrel_bay/recorded_graph_method_limits names
#       what scripts/demo.sh replays
set -euo pipefail
cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
methods=${METHODS:-cypher,naive,local,hipporag}
.venv/bin/python -m graphrag index --input data/kestrel_bay/docs --out output/kestrel_bay \
  --gold data/kestrel_bay/gold_graph.json --quiet
for method in ${methods//,/ }; do
  limit=$(tr ',' '\n' <<< "${METHOD_LIMITS:-}" | grep "^$method=" || true)
  .venv/bin/python -m graphrag eval --index output/kestrel_bay \
    --questions data/kestrel_bay/graph_questions.jsonl --methods "$method" --metrics none \
    --judge-controls 0 --method-limits "${limit:-none}" \
    --out "${OUT:-output/kestrel_bay_graph_recording}/$method" --quiet
done
