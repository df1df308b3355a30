"""The project a notebook runs on, opened in one place: its workbench and its folders.

Every notebook names its project in its one parameter cell (papermill's ``parameters`` tag)
and calls :func:`open_project`. A project is a folder with a ``graphrag.toml``; it keeps its
corpus in ``input/``, its index in ``output/``, its questions in ``questions.jsonl``, its
reports in ``reports/`` and its recorded replies in ``cache/``. The demo is the repository
itself, whose corpus and recorded caches sit where the repository has always kept them.

The project's folders are its ``[project]`` settings, resolved against its root (for the
demo, the repository's ``graphrag.toml`` names them).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from graphrag.settings import REPO_ROOT
from workbench import Workbench


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
    if not (root / "graphrag.toml").is_file():
        raise FileNotFoundError(f"{root} is not a project: it has no graphrag.toml")
    wb = Workbench(root=root, cache=cache)
    folders = [wb.project_path(name) for name in ("input", "output", "questions", "reports")]
    # the demo's notebooks write beside its index; another project's into a folder of their own
    scratch = root / ("output" if root == REPO_ROOT.resolve() else "notebook_output")
    return Project(root, wb, *folders, scratch)
