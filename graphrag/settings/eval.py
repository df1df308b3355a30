"""Settings of evaluation: ``[eval]``."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class EvalSettings:
    """How ``graphrag eval`` answers the questions, judges the answers and states the spread."""

    methods: list[str] = field(
        default_factory=lambda: ["naive", "hyde", "multi_query", "local", "global"]
    )
    """Retrieval methods ``graphrag eval`` answers with, by registered name (``--methods``);
    opt-in ones (e.g. "drift", "ppr") too when named here."""
    metrics: list[str] = field(
        default_factory=lambda: ["faithfulness", "answer_relevancy", "context_recall"]
    )
    """RAGAS metrics the judge model scores: faithfulness, answer_relevancy, context_recall, and
    when named, context_precision (against the reference) and context_utilization (its
    reference-free form, against the answer), each one judge call per context of the first 5."""
    seed: int = 2024
    """Seed of the bootstrap resamples and of the judge-validity control sample."""
    judge_sample: int = 0
    """Questions faithfulness, context recall and context precision are judged on
    (``--judge-sample``): a seeded sample (eval.seed) of this many, from the ``test`` split
    when the set has one; 0: all. Answer relevancy is judged on every question."""
    primary: str = ""
    """The one comparison a report is run for, declared before the run (``--primary``):
    "METHOD > BASELINE on METRIC" (or "<"), e.g. "hipporag > naive on recall@5". Tested alone
    at 0.05 and printed first; every other test is exploratory. Empty: none declared (the
    report says so)."""
    tuned_on_test: list[str] = field(default_factory=list)
    """Settings chosen on this question set's test questions too (e.g. before it was split):
    every headline names them, a tuning-set caveat (docs/defaults-provenance.md)."""
