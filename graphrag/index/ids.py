"""Stable row ids of the index: the same parts give the same id on every run and machine, so
an incremental update and a rebuild name an entity or a relationship alike."""

from __future__ import annotations

import hashlib


def stable_id(*parts: str) -> str:
    """Return the 16-hex-digit id of ``parts`` (e.g. ``("entity", name_key)``)."""
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]
