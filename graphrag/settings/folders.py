"""Settings of a project's folders: ``[project]`` and ``[prompts]``.

A project is a folder with a ``graphrag.toml`` (``graphrag init DIR`` writes one); every
relative path setting is taken from that folder, so what a user runs in their project stays
in it: the index, the reports and the caches, never the repository's committed data.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class ProjectSettings:
    """Where a project's commands read and write when no flag names a path."""

    input: str = "input"
    """Documents ``graphrag index`` reads: a folder of .txt/.md files, or a .jsonl."""
    output: str = "output"
    """The index folder ``index`` writes and ``query``, ``eval`` and the notebooks read."""
    questions: str = "questions.jsonl"
    """The question set ``eval`` scores and ``questions generate`` writes."""
    reports: str = "reports"
    """The folder ``eval`` writes its report into."""


@dataclass
class PromptSettings:
    dir: str = ""
    """Your own prompt folder (relative paths from the project root): a template file there,
    named like a packaged one (templates/<name>.txt), is used instead of it; empty: the
    packaged prompts only. See docs/prompts.md."""
