"""A new user's path, end to end, against a scripted endpoint: `graphrag init`, five documents
in input/, `index`, every method asked, questions generated, `eval`, a report — with no path
flag, everything inside the project."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from conftest import serving_fake
from scripted_model import scripted_model

from graphrag.query.registry import ALL_METHODS
from workbench.cli import main
from workbench.eval.questions import load_questions

pytestmark = pytest.mark.usefixtures("isolated_cwd")

DOCUMENTS = {
    "harbour.txt": "Mayor Ana Ruiz signed the Harbour Agreement with the Port Authority in "
    "2021. The Port Authority manages the Old Pier and the North Basin.",
    "reef.txt": "The Reef Trust monitors the Outer Reef. Dr Lee Chen leads the Reef Trust and "
    "reports to the Port Authority every spring on coral bleaching.",
    "ferry.txt": "Blue Line Ferries runs boats from the Old Pier to Gull Island. Captain Omar "
    "Haddad has skippered the Gull Island route since 2015.",
    "council.txt": "The Town Council approved the North Basin dredging plan after Mayor Ana "
    "Ruiz cast the deciding vote. The Reef Trust opposed the plan.",
    "festival.txt": "The Lantern Festival fills the Old Pier every August. Blue Line Ferries "
    "adds night crossings to Gull Island during the Lantern Festival.",
}


def run(root: Path, *args: str) -> int:
    return main(["--root", str(root), *args])


def test_init_index_ask_every_method_evaluate_and_report(tmp_path: Path, capsys) -> None:
    root = tmp_path / "my-project"
    assert main(["init", str(root)]) == 0
    for name, text in DOCUMENTS.items():
        (root / "input" / name).write_text(text, encoding="utf-8")
    with serving_fake() as fake, pytest.MonkeyPatch.context() as env:
        fake.respond_with(scripted_model)
        env.setenv("GRAPHRAG_LLM__BASE_URL", fake.base_url)
        # the scripted model answers extraction one chunk per call
        env.setenv("GRAPHRAG_INDEX__PACK_DOCUMENTS_TOKENS", "0")
        assert run(root, "index", "--quiet") == 0
        capsys.readouterr()
        question = "Who signed the Harbour Agreement?"
        assert run(root, "query", question, "--method", "all", "--opt-in", "--json") == 0
        answers = json.loads(capsys.readouterr().out)
        # no question set yet: generate one from the index, into the project's questions.jsonl
        assert run(root, "questions", "generate", "--count", "3") == 0
        assert run(root, "questions", "generate") == 2, "never over an existing question set"
        generated = load_questions(root / "questions.jsonl")
        assert run(root, "eval", "--methods", "all", "--opt-in", "--quiet") == 0
    assert sorted(answers) == sorted(ALL_METHODS)
    for method, answer in answers.items():
        assert answer["text"].strip(), method
    assert len(generated) > 0 and set(generated["split"]) <= {"dev", "test"}
    assert (root / "questions.filter_log.json").is_file()
    records = pd.read_parquet(root / "reports" / "records.parquet")
    assert sorted(records["method"].unique()) == sorted(ALL_METHODS)
    assert set(records["question_id"]) == set(generated["id"])
    assert records["answer_error"].isna().all()
    summary = (root / "reports" / "summary.md").read_text(encoding="utf-8")
    for method in ALL_METHODS:
        assert method in summary
