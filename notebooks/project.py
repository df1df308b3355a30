"""The project a notebook runs on, opened in one place: its workbench and its folders.

Every notebook names its project in its one parameter cell (papermill's ``parameters`` tag)
and calls :func:`open_project`. A project is a folder with a ``graphrag.toml``; it keeps its
corpus in ``input/``, its index in ``output/``, its questions in ``questions.jsonl``, its
reports in ``reports/`` and its recorded replies in ``cache/``. The demo is the repository
itself, whose corpus and recorded caches sit where the repository has always kept them.

Interim, until settings resolve relative paths against the project (``Settings.root``,
``Workbench(root=...)`` and the ``[project]`` table): the project's relative path settings are
resolved here, and its folders are the ``[project]`` defaults. Then this body becomes
``Workbench(root=root, cache=cache)`` and ``settings.resolve_path(settings.project.<folder>)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from graphrag import Workbench
from graphrag.settings import REPO_ROOT, load_settings

# the path settings a project's graphrag.toml names relative to its own folder
PATH_SETTINGS = (("cache", "path"), ("embeddings", "cache_path"), ("embeddings", "recorded_path"))


@dataclass
class Project:
    """A project's workbench and the folders the notebooks read and write."""

    root: Path
    wb: Workbench
    input: Path  # the corpus: a folder of .txt/.md, or a .jsonl
    index: Path  # the index folder
    questions: Path  # the question set (may be absent)
    reports: Path  # the reports `graphrag eval` wrote
    scratch: Path  # where a notebook writes what is not the index (graph page, its own report)

    @property
    def gold_graph(self) -> Path:
        """The hand-made gold graph, beside the questions (as the evaluation looks for it)."""
        return self.questions.parent / "gold_graph.json"

    @property
    def is_demo(self) -> bool:
        return self.root == REPO_ROOT.resolve()


def open_project(project: str | Path, cache: str) -> Project:
    """Return the project at ``project`` (a folder holding graphrag.toml; the repository
    itself is the demo) with a workbench whose cache mode is ``cache``."""
    root = Path(project).resolve()
    config = root / "graphrag.toml"
    if root == REPO_ROOT.resolve():
        # the demo's settings file names its recorded caches (without one, the defaults do)
        wb = Workbench(config if config.is_file() else None, cache=cache)
        corpus = root / "data" / "kestrel_bay"
        return Project(
            root, wb, corpus / "docs", root / "output" / "kestrel_bay",
            corpus / "questions.jsonl", root / "reports", root / "output",
        )  # fmt: skip
    if not config.is_file():
        raise FileNotFoundError(f"{root} is not a project: it has no graphrag.toml")
    settings = load_settings(config, overrides={"cache": {"mode": cache}})
    for section, name in PATH_SETTINGS:
        value = getattr(getattr(settings, section), name)
        if value and not Path(value).expanduser().is_absolute():
            setattr(getattr(settings, section), name, str(root / value))
    return Project(
        root, Workbench(settings=settings), root / "input", root / "output",
        root / "questions.jsonl", root / "reports", root / "notebook_output",
    )  # fmt: skip
