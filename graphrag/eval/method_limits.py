"""Which questions of a set each method answers (``eval --method-limits``): the first N, or
one split's, so a costly method can be recorded on part of a set; its report n is its own and
its paired tests use the questions both methods answered."""

from __future__ import annotations

import pandas as pd

MethodLimit = int | str  # the first N questions, or one split's questions ("test")


def parse_method_limits(text: str | None) -> dict[str, MethodLimit]:
    """Return ``{"drift": 10, "hipporag": "test"}`` for "drift=10,hipporag=test" (empty or
    "none": no limit)."""
    limits: dict[str, MethodLimit] = {}
    for item in (text or "").split(","):
        item = item.strip()
        if not item or item == "none":
            continue
        name, sep, value = item.partition("=")
        value = value.strip()
        if sep and value.isdigit() and int(value) >= 1:
            limits[name.strip()] = int(value)
        elif sep and value.isidentifier():
            limits[name.strip()] = value
        else:
            raise ValueError(
                f"method limit {item!r}: write METHOD=N with N a positive whole number, "
                "e.g. drift=10, or METHOD=SPLIT, e.g. hipporag=test"
            )
    return limits


def describe_limit(limit: MethodLimit) -> str:
    """How a report names a method limit: "first 10" or "test split"."""
    return f"first {limit}" if isinstance(limit, int) else f"{limit} split"


def limited_to(limit: MethodLimit | None, position: int, question: pd.Series) -> bool:
    """Whether a method with this limit answers the question at ``position``."""
    if limit is None:
        return True
    if isinstance(limit, int):
        return position < limit
    return question.get("split") == limit
