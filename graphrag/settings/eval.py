"""Settings of evaluation: ``[eval]``."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class EvalSettings:
    methods: list[str] = field(
        default_factory=lambda: ["naive", "hyde", "multi_query", "local", "global"]
    )
    # Methods added to ``methods`` and to ``query --method all``, e.g. ["drift", "ppr"]; empty
    # by default (scripts/demo.sh names PPR and the router, whose demo answers are recorded).
    opt_in_methods: list[str] = field(default_factory=list)
    metrics: list[str] = field(
        default_factory=lambda: ["faithfulness", "answer_relevancy", "context_recall"]
    )
    bootstrap_samples: int = 2000
    seed: int = 2024
    answer_relevancy_strictness: int = 1
    # The questions the pairwise judge reads (``eval --pairwise``), by type: the GraphRAG
    # paper's criteria (comprehensiveness, diversity, ...) are for global, sensemaking
    # questions; empty: every question.
    pairwise_types: list[str] = field(default_factory=lambda: ["global"])
    # the pairwise judgment also rates each judged method against a closed-book answer (the
    # model's answer with no corpus text, HyDE's passage): whether the judge rewards what the
    # corpus says (eval/pairwise.py, CLOSED_BOOK)
    pairwise_closed_book: bool = True
