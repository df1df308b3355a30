"""The router's classifier on a question set, and what routing would score on recorded answers.

Run: .venv/bin/python -m studies.benchmarks.router_study
     [--questions data/kestrel_bay/questions.jsonl]
     [--records reports/kestrel_bay/records.parquet] [--metric keyword_hit_rate]

1. Accuracy of the prototype classifier (no LLM call) against the set's known types, with the
   confusion table. The prototypes are hand-written (``graphrag.query.router.PROTOTYPES``);
   none is taken from the set.
2. On the questions whose answers the records hold for every method the comparison needs,
   the mean judge-free ``--metric`` of always-naive, of the best single method (picked in
   hindsight on those same questions, so it flatters itself), of the router (each question
   scored by the answer of the method it routes to) and of a per-question oracle (upper
   bound). No answer is computed: the recorded ones are read.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import pandas as pd

from graphrag.query.router import PROTOTYPE_TOP, QUESTION_SET_TYPE, PrototypeClassifier
from graphrag.query.router import routes as router_routes
from graphrag.settings import REPO_ROOT, load_settings
from graphrag.text.embeddings import LocalEmbedder


def classify_set(questions: pd.DataFrame, top: int) -> pd.DataFrame:
    """Return the questions with their predicted kind, as the set's type vocabulary."""
    with tempfile.TemporaryDirectory() as folder:
        settings = load_settings(
            env={}, overrides={"embeddings": {"cache_path": f"{folder}/vectors.sqlite"}}
        )
        classifier = PrototypeClassifier(LocalEmbedder(settings), top=top)
        kinds = [classifier.classify(q) for q in questions["question"]]
    return questions.assign(predicted=[QUESTION_SET_TYPE[k] for k in kinds], kind=kinds)


def routing_scores(
    predicted: pd.DataFrame, records: pd.DataFrame, routes: dict[str, str], metric: str
) -> tuple[pd.DataFrame, int]:
    """Return the mean ``metric`` per strategy and the number of questions it is taken over."""
    table = records.pivot_table(index="question_id", columns="method", values=metric)
    # the router's own recorded answers are one of the strategies compared, not a method it
    # could route to
    table = table.drop(columns="router", errors="ignore")
    routed = predicted.set_index("id")["kind"].map(routes)
    needed = sorted(set(routed) | {"naive"})
    table = table.dropna(subset=[m for m in needed if m in table])
    table = table[[m in table.columns for m in routed.reindex(table.index)]]
    router = [table.at[q, routed[q]] for q in table.index]
    means = table.mean()
    strategies = {
        "always naive": means["naive"],
        f"always best single ({'/'.join(means.index[means == means.max()])}, chosen in "
        "hindsight)": means.max(),
        "router": sum(router) / len(router),
        "per-question oracle (upper bound)": table.max(axis=1).mean(),
    }
    frame = pd.DataFrame({"strategy": list(strategies), metric: list(strategies.values())})
    return frame, len(table)


def summary_line(scores: pd.DataFrame, metric: str, n: int) -> str:
    """The strategies' means in one line, as docs/research-log.md quotes them."""
    values = scores.set_index("strategy")[metric]
    best = next(s for s in values.index if s.startswith("always best single"))
    picked = best.removeprefix("always best single (").split(",")[0]
    return (
        f"{metric} on {n} questions: always naive {values['always naive']:.3f}, always the "
        f"best single method {values[best]:.3f} ({picked}, picked in hindsight), router "
        f"{values['router']:.3f}, per-question oracle "
        f"{values['per-question oracle (upper bound)']:.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", default=str(REPO_ROOT / "data/kestrel_bay/questions.jsonl"))
    parser.add_argument("--records", default=str(REPO_ROOT / "reports/kestrel_bay/records.parquet"))
    parser.add_argument("--metric", default="keyword_hit_rate")
    args = parser.parse_args()
    settings = load_settings(env={})
    questions = pd.read_json(Path(args.questions), lines=True)
    predicted = classify_set(questions, PROTOTYPE_TOP)
    right = predicted["predicted"] == predicted["type"]
    print(f"classifier accuracy: {right.mean():.3f} ({right.sum()}/{len(predicted)})")
    print(pd.crosstab(predicted["type"], predicted["predicted"], margins=True).to_string())
    wrong = predicted[predicted["predicted"] != predicted["type"]]
    for row in wrong.itertuples(index=False):
        print(f"  {row.id} {row.type} -> {row.predicted}: {row.question}")
    routes = router_routes(settings.query.methods["router"])
    kind_of_type = {t: k for k, t in QUESTION_SET_TYPE.items()}
    right_route = predicted["type"].map(kind_of_type).map(routes) == predicted["kind"].map(routes)
    print(
        f"route accuracy (the method chosen is the one the true type gets): "
        f"{right_route.mean():.3f} ({right_route.sum()}/{len(predicted)}); routes {routes}"
    )
    records = pd.read_parquet(args.records)
    scores, n = routing_scores(predicted, records, routes, args.metric)
    print(f"\n{args.metric} on the {n} questions with every needed answer recorded:")
    print(scores.to_string(index=False))
    print(summary_line(scores, args.metric, n))
    print(f"\nmean {args.metric} per method and question type (recorded answers):")
    print(
        records.pivot_table(
            index="type", columns="method", values=args.metric, aggfunc="mean", margins=True
        )
        .round(3)
        .to_string()
    )


if __name__ == "__main__":
    main()
