"""A project folder: what ``graphrag init DIR`` writes, so a researcher's own corpus, index,
reports and caches live together and never in the repository's committed data.

    my-project/
      graphrag.toml      every setting, commented out at its default, with what it means
      prompts/           an editable copy of every prompt (used instead of the packaged one)
      input/             your documents (.txt, .md, or one .jsonl)
      questions.example.jsonl   the question format, to copy into questions.jsonl (which
                         `graphrag questions generate` writes from your documents)
      .gitignore         output/, graph databases (*.lbug) and the vector cache are rebuilt;
                         cache/llm replays a run
"""

from __future__ import annotations

import json
from pathlib import Path

from graphrag.prompts.loader import export_templates
from graphrag.settings.load import PROJECT_FILE
from graphrag.settings.reference import settings_file

HEADING = (
    "The settings of this project. Every setting is listed, commented out at its default; "
    "remove the # of a line to change it. Relative paths are taken from this folder. "
    "`graphrag settings --root .` prints the values in effect and where each came from; "
    "docs/configuration.md and docs/own-model.md in the workbench explain them."
)
EXAMPLE_FILE = "questions.example.jsonl"
# One question of each type; fields as in workbench.eval.questions (``support``, the ids of
# the documents that answer it, is left out here: it must name documents in input/).
EXAMPLE_QUESTIONS = [
    {
        "id": "q01",
        "question": "Who signed the 2021 harbour agreement?",
        "type": "local",
        "reference": "Mayor Ana Ruiz signed it for the town.",
        "answer_keywords": ["Ana Ruiz"],
        "split": "dev",
    },
    {
        "id": "q02",
        "question": "What are the main themes of these documents?",
        "type": "global",
        "reference": "The harbour's economy, its ecology and the town's governance.",
        "answer_keywords": ["harbour", "ecology", "governance"],
        "split": "test",
    },
]
# the index and the vectors are rebuilt from input/ and the recorded replies in cache/llm,
# which are what makes a run replay: commit those (and reports/)
GITIGNORE = "output/\n*.lbug*\ncache/embeddings.sqlite\n"


class ProjectExistsError(FileExistsError):
    """``graphrag init`` would overwrite a project's files; the message names the first."""


def init_project(folder: str | Path) -> list[Path]:
    """Write a new project into ``folder`` (made if missing; an existing project's files are
    never overwritten) and return the files and folders written."""
    root = Path(folder)
    settings_path = root / PROJECT_FILE
    if settings_path.exists():
        raise ProjectExistsError(f"{settings_path} exists: {root} is a project already")
    root.mkdir(parents=True, exist_ok=True)
    prompts = export_templates(root / "prompts")
    settings_path.write_text(
        settings_file({"prompts.dir": json.dumps("prompts")}, HEADING), encoding="utf-8"
    )
    (root / "input").mkdir(exist_ok=True)
    written = [settings_path, root / "input", root / "prompts", *prompts]
    for name, text in (
        (EXAMPLE_FILE, "".join(json.dumps(q) + "\n" for q in EXAMPLE_QUESTIONS)),
        (".gitignore", GITIGNORE),
    ):
        path = root / name
        if not path.exists():
            path.write_text(text, encoding="utf-8")
            written.append(path)
    return written
