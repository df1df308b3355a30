"""Settings of the prompts: ``[prompts]``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class PromptSettings:
    dir: str = ""
    """Your own prompt folder (relative paths from the project root): a template file there,
    named like a packaged one (templates/<name>.txt), is used instead of it; empty: the
    packaged prompts only. See docs/prompts.md."""
