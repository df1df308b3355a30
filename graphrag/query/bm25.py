"""BM25: the text units that share the question's rarest words, with no embedding and no graph.

A lexical baseline every dense and graph method should beat, and docs/methods.md's example.
"""

from __future__ import annotations

from functools import cached_property

import bm25s
import numpy as np

from graphrag import schemas as S
from graphrag.query.base import Method, Retrieval
from graphrag.query.registry import register

# the textbook values (bm25s' defaults): K1, a repeated word's saturation; B, length scaling
K1 = 1.5
B = 0.75


def tokenize(texts: list[str]) -> list[list[str]]:
    """Return each text's lower-cased words of two or more characters, stop words dropped."""
    return bm25s.tokenize(texts, stopwords="en", return_ids=False, show_progress=False)


@register("bm25", opt_in=True, order=90)
class BM25Retrieval(Method):
    @cached_property
    def scorer(self) -> bm25s.BM25:
        """The BM25 index of the text units, built once per index."""
        scorer = bm25s.BM25(k1=K1, b=B)
        scorer.index(tokenize(list(self.index.text_units[S.TEXT])), show_progress=False)
        return scorer

    def ranking(self, question: str) -> list[int]:
        """Return the rows of the text units, best BM25 score first (ties by row)."""
        words = tokenize([question])[0]
        if not words or not len(self.index.text_units):
            return list(range(len(self.index.text_units)))
        scores = self.scorer.get_scores(words)
        return [int(r) for r in np.argsort(-scores, kind="stable")]

    async def aretrieve_ranked(self, question: str) -> Retrieval:
        return self.chunk_retrieval(self.ranking(question), question)
