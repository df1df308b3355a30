"""The chat messages every prompt builder returns."""

from __future__ import annotations

Messages = list[dict[str, str]]


def system_and_user(system: str, user: str) -> Messages:
    """Return the two-turn conversation most prompts are: a system turn, then a user turn."""
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]
