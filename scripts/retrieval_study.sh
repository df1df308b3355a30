#!/usr/bin/env bash
# The retrieval study: MuSiQue's 100 questions over their full 1,890-paragraph corpus
# (data/musique_full), indexed in the LLM-free NLP mode, and the context each chunk-ranking
# method would show the model scored with no answer call (evidence recall, recall@2/@5, per
# hop; paired tests against naive RAG): reports/musique_retrieval, and PPR with its passage
# weight cross-fitted (reports/musique_retrieval_ppr_crossfit). Then the cross-corpus summary,
# the results page (docs/results.md) and the README's summary are regenerated with them.
#
# No LLM call for naive, BM25, hybrid, local, PPR and integrate; on 2 cores the first run
# spends most of its 15-30 minutes embedding (chunks, entities, reports, PPR's 35,000 facts,
# the entity names of HippoRAG's synonym edges and MiniRAG's seeds); the vectors are cached,
# so a second run takes a few minutes. HyDE, multi-query, HippoRAG (its recognition filter)
# and MiniRAG (its query entities) ask the model once a question for their retrieval: recorded
# in data/llm_cache, replayed here (CACHE=on asks the model for what is missing, e.g. for other
# METHODS or questions). The steps from ppr to hipporag: studies.hipporag_steps, below.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
config=(--config data/musique/graphrag.toml)
.venv/bin/python -m graphrag "${config[@]}" index --input data/musique_full/docs \
  --out output/musique_full_nlp --quiet
.venv/bin/python -m graphrag "${config[@]}" --cache "${CACHE:-replay}" retrieval \
  --index output/musique_full_nlp --questions data/musique_full/questions.jsonl \
  --methods "${METHODS:-naive,hyde,multi_query,bm25,hybrid,local,ppr,hipporag,minirag,integrate}" \
  --out reports/musique_retrieval --quiet
# The same methods with BM25 fused into their first stage (query.first_stage = "hybrid"; naive
# RAG under it retrieves as `hybrid`): reports/musique_retrieval_hybrid.
GRAPHRAG_QUERY__FIRST_STAGE=hybrid .venv/bin/python -m graphrag "${config[@]}" --cache replay \
  retrieval --index output/musique_full_nlp --questions data/musique_full/questions.jsonl \
  --methods naive,ppr,hipporag,integrate --out reports/musique_retrieval_hybrid --quiet
# Our reports also carry a reading generated from their tests (studies/report_prose.py).
.venv/bin/python -m studies.report_prose reports/musique_retrieval reports/musique_retrieval_hybrid
# HippoRAG 2 step by step, from ppr to hipporag (docs/hipporag.md's generated tables): on
# MuSiQue-full's LLM-free index, and on MuSiQue-50's LLM-mode index when it has been built
# (scripts/record_musique.sh builds it).
.venv/bin/python -m studies.hipporag_steps "${config[@]}" --index output/musique_full_nlp \
  --questions data/musique_full/questions.jsonl \
  --out studies/records/hipporag_steps_musique_full.json
if [ -f output/musique_llm/index.json ]; then
  .venv/bin/python -m studies.hipporag_steps --config data/musique/llm_index.toml \
    --index output/musique_llm --questions data/musique/questions.jsonl \
    --out studies/records/hipporag_steps_musique_llm.json
fi
.venv/bin/python -m studies.hipporag_steps --page docs/hipporag.md \
  --records studies/records/hipporag_steps_musique_full.json \
  studies/records/hipporag_steps_musique_llm.json
# PPR's passage-node weight without choosing it on the test questions: one run per candidate
# (the default, 1.0, chosen on the demo, first; HippoRAG 2 uses 0.05), then each half of the
# questions is scored under the weight that was best on the other half (`python -m studies.crossfit`).
# The candidate runs go to output/ (about a minute each); the cross-fitted report is committed.
runs=()
for weight in 1.0 0.5 0.2 0.1 0.05 0.02; do
  GRAPHRAG_QUERY__PPR__PASSAGE_WEIGHT=$weight .venv/bin/python -m graphrag "${config[@]}" \
    --cache replay retrieval --index output/musique_full_nlp \
    --questions data/musique_full/questions.jsonl --methods naive,ppr \
    --out "output/musique_ppr_sweep/w$weight" --quiet
  runs+=("output/musique_ppr_sweep/w$weight")
done
.venv/bin/python -m studies.crossfit --runs "${runs[@]}" --method ppr \
  --select evidence_recall --folds 2 --out reports/musique_retrieval_ppr_crossfit
# The cross-corpus summary as scripts/demo.sh writes it (with the LLM-mode MuSiQue index's
# cost when that index has been built, as demo.sh does).
llm_index=()
[ -f output/musique_llm/index.json ] && llm_index=(--index output/musique_llm)
.venv/bin/python -m studies.summarize reports/kestrel_bay reports/kestrel_bay_thematic \
  reports/kestrel_bay_heldout reports/kestrel_bay_second_heldout reports/musique \
  --retrieval reports/musique_retrieval reports/musique_retrieval_hybrid \
  reports/musique_retrieval_ppr_crossfit reports/graphrag_bench_retrieval \
  reports/cmrc2018_retrieval \
  "${llm_index[@]}" --out reports/SUMMARY.md \
  --results docs/results.md --readme README.md
