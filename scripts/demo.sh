#!/usr/bin/env bash
# The main job: set up, index the bundled Kestrel Bay corpus with the embedded model and the
# default settings, show every method's answer to one question, and write the comparison
# report to reports/kestrel_bay (and the thematic head-to-head to reports/kestrel_bay_thematic,
# its held-out questions' to reports/kestrel_bay_heldout and reports/kestrel_bay_second_heldout,
# the graph-query questions' to reports/kestrel_bay_graph_queries);
# then the MuSiQue report (reports/musique, its NLP-mode index
# and the recorded answers, settings in data/musique/graphrag.toml) and the cross-corpus
# summary reports/SUMMARY.md (each report given its generated reading first, studies.report_prose),
# with its headline and reading on the results page
# docs/results.md and a short summary in the README. Recorded LLM responses in data/llm_cache
# make this fast on a clean checkout; anything not recorded is asked of the live local model
# (about 10-20 tokens/s).
#
# EVAL_LIMIT: how many questions to evaluate (round-robin over question types). The default
# is the number whose answers are recorded (data/kestrel_bay/recorded_*: the methods and
# RAGAS metrics recorded, scripts/record_demo.sh records more); any other EVAL_LIMIT, or
# EVAL_LIMIT=all, asks the live model for what is missing and records it (hours of CPU; re-runs
# resume from the cache).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
recorded=$(cat data/kestrel_bay/recorded_eval_limit)
methods=$(cat data/kestrel_bay/recorded_methods)
metrics=$(cat data/kestrel_bay/recorded_metrics)
limit=${EVAL_LIMIT:-$recorded}
[ "$limit" = all ] && limit_args=() || limit_args=(--limit "$limit")
# The recorded questions are evaluated in replay: every answer and judge call comes from the
# cache. Any other EVAL_LIMIT asks the live model for what is missing and records it.
cache_args=()
[ "$limit" = "$recorded" ] && cache_args=(--cache replay)
.venv/bin/python -m graphrag index --input data/kestrel_bay/docs --out output/kestrel_bay \
  --gold data/kestrel_bay/gold_graph.json --quiet
.venv/bin/python -m graphrag "${cache_args[@]}" query --index output/kestrel_bay \
  --method "$methods" \
  "In what year was the Kestrel Bay Marine Institute founded, and which two bodies founded it?"
# The pairwise judge reads the global questions only (workbench/eval/pairwise.py: JUDGED_TYPES).
.venv/bin/python -m graphrag "${cache_args[@]}" eval --index output/kestrel_bay \
  --questions data/kestrel_bay/questions.jsonl --methods "$methods" --metrics "$metrics" \
  --pairwise "$(cat data/kestrel_bay/recorded_pairwise)" \
  --out reports/kestrel_bay "${limit_args[@]}"
# The 18 thematic questions (the 6 global ones above and 12 more, recorded): global and local
# search against naive RAG head to head, on enough questions for the win rate to tell a win
# from a tie. The RAGAS triad is in every report, each judgement from the cache or shown as
# "not recorded" (these sets' judgements are not recorded yet).
.venv/bin/python -m graphrag --cache replay eval --index output/kestrel_bay \
  --questions data/kestrel_bay/thematic_questions.jsonl --methods naive,global,local \
  --metrics "$metrics" --pairwise global:naive,local:naive --out reports/kestrel_bay_thematic --quiet
# 12 held-out thematic questions (h01-h12), written after the settings were chosen on the 18
# and before any method answered them: the same methods and pairs, recorded.
.venv/bin/python -m graphrag --cache replay eval --index output/kestrel_bay \
  --questions data/kestrel_bay/heldout_thematic_questions.jsonl --methods naive,global,local \
  --metrics "$metrics" --pairwise global:naive,local:naive --out reports/kestrel_bay_heldout --quiet
# 12 more (s01-s12), written after global search's reduce drafts were chosen on the 30 above
# and before any method answered them: the same methods and pairs, recorded; and global search
# at a budget (lazy_global, its budget set by cost arithmetic, no question) against naive RAG.
.venv/bin/python -m graphrag --cache replay eval --index output/kestrel_bay \
  --questions data/kestrel_bay/second_heldout_thematic_questions.jsonl \
  --methods naive,global,local,lazy_global --metrics "$metrics" \
  --pairwise global:naive,local:naive,lazy_global:naive \
  --out reports/kestrel_bay_second_heldout --quiet
# The 12 graph-query questions (gq01-gq12: counting, aggregation, type filters, 2-3 hop paths):
# Text-to-Cypher against naive RAG, local search and HippoRAG 2, recorded by
# scripts/record_graph_queries.sh; recorded_graph_method_limits names a method recorded on part
# of the set (reported with its own n).
.venv/bin/python -m graphrag --cache replay eval --index output/kestrel_bay \
  --questions data/kestrel_bay/graph_questions.jsonl \
  --methods "$(cat data/kestrel_bay/recorded_graph_methods)" --metrics none \
  --method-limits "$(cat data/kestrel_bay/recorded_graph_method_limits)" \
  --out reports/kestrel_bay_graph_queries --quiet
# Declining what the documents do not say (docs/evaluation.md): the 12 planted unanswerable
# twins beside the 12 demo questions they were made from, through naive RAG and local search,
# with the packaged answer prompt and with the declining variant (data/kestrel_bay/declining.toml);
# `declined` on the twins is the rejection rate, on their sources the false-rejection rate.
.venv/bin/python -m graphrag --cache replay eval --index output/kestrel_bay \
  --questions data/kestrel_bay/unanswerable_paired.jsonl --methods naive,local --metrics none \
  --out reports/kestrel_bay_unanswerable --quiet
.venv/bin/python -m graphrag --config data/kestrel_bay/declining.toml --cache replay eval \
  --index output/kestrel_bay --questions data/kestrel_bay/unanswerable_paired.jsonl \
  --methods naive,local --metrics none --out reports/kestrel_bay_unanswerable_declining --quiet
# The Chinese demo (data/zh_demo, docs/languages.md): its LLM index (the Chinese prompts) and
# one Chinese question through naive RAG and local search, recorded by ZH=1
# scripts/record_demo.sh, replayed, with extraction quality against its gold graph.
.venv/bin/python -m graphrag --cache replay index --input data/zh_demo/docs --out output/zh_demo \
  --gold data/zh_demo/gold_graph.json --quiet
.venv/bin/python -m graphrag --cache replay query --index output/zh_demo --method naive,local \
  "$(cat data/zh_demo/recorded_question)"
# ... its six dev questions (data/zh_demo/questions.jsonl); and the same index and questions with
# the English prompts, as before the Chinese ones: python -m studies.chinese_prompts
.venv/bin/python -m graphrag --cache replay eval --index output/zh_demo \
  --questions data/zh_demo/questions.jsonl --methods naive,local --metrics none \
  --out reports/zh_demo --quiet
english=(--config data/zh_demo/english_prompt.toml --cache replay)
.venv/bin/python -m graphrag "${english[@]}" index --input data/zh_demo/docs \
  --out output/zh_demo_english --gold data/zh_demo/gold_graph.json --quiet
.venv/bin/python -m graphrag "${english[@]}" eval --index output/zh_demo_english \
  --questions data/zh_demo/questions.jsonl --methods naive,local --metrics none \
  --out reports/zh_demo_english_prompt --quiet
# MuSiQue: the questions, methods and RAGAS metrics whose answers and judge calls are
# recorded (scripts/record_musique.sh records more), replayed; recorded_method_limits names
# a method recorded on the first N questions only (e.g. drift=10: minutes per question live)
# or on the test split only (hipporag=test), reported with its own n; recorded_judge_sample
# the seeded sample of test questions faithfulness and context recall are judged on (a
# minute of prompt reading per judgement here). A judgement not yet recorded is reported as
# "not recorded", not guessed. The report's primary hypothesis is the one reports/musique/NOTES.md
# declared before step_back's and decomposition's answers were scored or read. The judge's
# planted controls are the recorded ones data/musique/recorded_judge_controls.csv keeps, so
# a method added to the report does not redraw them.
musique=(--config data/musique/graphrag.toml)
.venv/bin/python -m graphrag "${musique[@]}" index --input data/musique/docs \
  --out output/musique_nlp --quiet
.venv/bin/python -m graphrag "${musique[@]}" --cache replay eval --index output/musique_nlp \
  --questions data/musique/questions.jsonl --methods "$(cat data/musique/recorded_methods)" \
  --metrics "$(cat data/musique/recorded_metrics)" \
  --limit "$(cat data/musique/recorded_eval_limit)" \
  --method-limits "$(cat data/musique/recorded_method_limits)" \
  --judge-sample "$(cat data/musique/recorded_judge_sample)" \
  --keep-controls data/musique/recorded_judge_controls.csv \
  --primary "decomposition > naive on evidence_recall" --out reports/musique --quiet
# MuSiQue's 12 planted unanswerable twins beside the 12 questions they were made from (6 dev,
# 6 test), through naive RAG and local search with the packaged answer prompt.
.venv/bin/python -m graphrag "${musique[@]}" --cache replay eval --index output/musique_nlp \
  --questions data/musique/unanswerable_paired.jsonl --methods naive,local --metrics none \
  --out reports/musique_unanswerable --quiet
# The same corpus indexed in the LLM mode (the lean defaults but one, named in
# data/musique/llm_index.toml; recorded by LLM_INDEX=1 scripts/record_musique.sh), replayed,
# for its cost beside the NLP mode's.
.venv/bin/python -m graphrag --config data/musique/llm_index.toml --cache replay index \
  --input data/musique/docs --out output/musique_llm --method llm --quiet
# Our reports also carry a reading generated from their tables (studies/report_prose.py).
.venv/bin/python -m studies.report_prose reports/kestrel_bay reports/kestrel_bay_thematic \
  reports/kestrel_bay_heldout reports/kestrel_bay_second_heldout reports/musique
.venv/bin/python -m studies.summarize reports/kestrel_bay reports/kestrel_bay_thematic \
  reports/kestrel_bay_heldout reports/kestrel_bay_second_heldout reports/musique \
  --retrieval reports/musique_retrieval reports/musique_retrieval_hybrid \
  reports/musique_retrieval_ppr_crossfit reports/graphrag_bench_retrieval \
  reports/cmrc2018_retrieval \
  --index output/musique_llm --out reports/SUMMARY.md \
  --results docs/results.md --readme README.md
