#!/usr/bin/env bash
# GraphRAG-Bench's novel subset (data/graphrag_bench): the 16 books converted from
# ../shared/datasets/graphrag_bench (or $GRAPHRAG_BENCH), indexed as one corpus with no LLM
# (data/graphrag_bench/graphrag.toml), and every LLM-free chunk-ranking method scored on all
# 1,624 questions against the committed gold text units (no answer call):
# reports/graphrag_bench_retrieval, with the seconds a question of each method and the index's
# build time. Most of the index time is embedding (chunks, entity descriptions, reports).
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
source=${GRAPHRAG_BENCH:-../shared/datasets/graphrag_bench}
[ -d "$source" ] || source=../../shared/datasets/graphrag_bench  # from a worktree
out=reports/graphrag_bench_retrieval
index=${INDEX:-output/graphrag_bench_nlp}
.venv/bin/python -m graphrag convert graphrag-bench --source "$source" --out output/graphrag_bench
mkdir -p "$out"
if [ ! -f "$index/index.json" ]; then
  start=$(date +%s)
  .venv/bin/python -m graphrag --config data/graphrag_bench/graphrag.toml index \
    --input output/graphrag_bench/docs --out "$index" --quiet
  echo "$(( $(date +%s) - start )) s ($(nproc) cores, $(date -u +%F))" > "$out/index_seconds.txt"
fi
.venv/bin/python -m studies.graphrag_bench_report run --index "$index" \
  --questions data/graphrag_bench/questions.jsonl --out "$out" \
  --methods "${METHODS:-naive,bm25,hybrid,local,ppr,hipporag,integrate}"
