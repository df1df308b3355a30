"""A project of one's own: `graphrag init` writes it, every command runs in it with `--root`,
its paths and caches stay inside it, and `graphrag settings` says where each value came from."""

from __future__ import annotations

import json
import subprocess
import tomllib
from pathlib import Path

import pytest
from conftest import indexing_model, serving_fake

from graphrag.prompts.loader import template_names
from graphrag.settings import REPO_ROOT, Settings, load_settings
from graphrag.settings.reference import sections, setting_value
from workbench.cli import main
from workbench.eval.questions import load_questions
from workbench.project import EXAMPLE_FILE, init_project

pytestmark = pytest.mark.usefixtures("isolated_cwd")

DOCS = {
    "harbour.txt": "Mayor Ana Ruiz signed the Harbour Agreement with the Port Authority in "
    "2021. The Port Authority manages the Old Pier.",
    "reef.txt": "The Reef Trust monitors the Outer Reef. Dr Lee Chen leads the Reef Trust "
    "and reports to the Port Authority every spring.",
}


def test_init_writes_every_setting_every_prompt_and_an_example_question_set(
    tmp_path: Path,
) -> None:
    root = tmp_path / "proj"
    written = init_project(root)
    text = (root / "graphrag.toml").read_text(encoding="utf-8")
    # every setting is listed (commented out at its default) and the file is valid TOML
    for section in sections():
        assert f"[{section.name}]" in text
        for setting in section.settings:
            key = setting.name.rpartition(".")[2]
            assert f"# {key} = {setting.default}" in text or f"{key} = " in text, setting.name
    assert tomllib.loads(text)["prompts"] == {"dir": "prompts"}
    assert sorted(p.stem for p in (root / "prompts").glob("*.txt")) == template_names()
    assert (root / "input").is_dir() and root / ".gitignore" in written
    examples = load_questions(root / EXAMPLE_FILE)
    assert set(examples["split"]) == {"dev", "test"}
    # the file's values are the defaults, but the prompts are the project's folder
    settings = load_settings(env={}, root=root)
    assert settings.to_dict() == {**Settings().to_dict(), "prompts": {"dir": "prompts"}}
    with pytest.raises(FileExistsError, match="is a project already"):
        init_project(root)


def test_settings_print_each_value_and_where_it_came_from(tmp_path: Path, capsys) -> None:
    root = tmp_path / "proj"
    assert main(["init", str(root)]) == 0
    variant = tmp_path / "variant.toml"
    variant.write_text("[query.local]\ntop_entities = 3\n", encoding="utf-8")
    capsys.readouterr()
    with pytest.MonkeyPatch.context() as env:
        env.setenv("GRAPHRAG_LLM__MODEL", "my-model")
        assert main(["--root", str(root), "--config", str(variant), "settings"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert f"# project root: {root.resolve()}" in lines
    assert 'dir = "prompts"  # graphrag.toml' in lines
    assert 'model = "my-model"  # GRAPHRAG_LLM__MODEL' in lines
    assert f"top_entities = 3  # {variant}" in lines
    assert 'output = "output"  # default' in lines
    # the printout is TOML a user can paste back
    body = "\n".join(line.split("  #")[0] for line in lines if not line.startswith("#"))
    assert tomllib.loads(body)["query"]["local"]["top_entities"] == 3


def test_setting_values_read_through_method_tables() -> None:
    settings = load_settings(env={}, overrides={"query": {"local": {"top_entities": 4}}})
    assert setting_value(settings, "query.local.top_entities") == 4
    assert setting_value(settings, "llm.model") == settings.llm.model


def _tree(folder: Path) -> dict[str, float]:
    return {str(p): p.stat().st_mtime for p in folder.rglob("*") if p.is_file()}


def test_a_project_indexes_and_answers_inside_its_own_folder(tmp_path: Path, capsys) -> None:
    """init -> documents in input/ -> index -> query, with no path flag: the index, the
    recorded replies and the vectors land in the project; the repository's data is untouched."""
    root = tmp_path / "proj"
    assert main(["init", str(root)]) == 0
    for name, text in DOCS.items():
        (root / "input" / name).write_text(text, encoding="utf-8")
    committed = _tree(REPO_ROOT / "data")
    with serving_fake() as fake:
        fake.respond_with(
            lambda body: (
                indexing_model(body)
                if body["messages"][0]["content"].startswith(
                    ("You build a knowledge graph", "You merge several", "You write a report")
                )
                else "Ana Ruiz signed it."
            )
        )
        with pytest.MonkeyPatch.context() as env:
            env.setenv("GRAPHRAG_LLM__BASE_URL", fake.base_url)
            env.setenv("GRAPHRAG_INDEX__PACK_DOCUMENTS_TOKENS", "0")
            assert main(["--root", str(root), "index", "--quiet"]) == 0
            assert main(["--root", str(root), "query", "Who signed?", "--method", "naive"]) == 0
    assert "Ana Ruiz signed it." in capsys.readouterr().out
    assert (root / "output" / "index.json").is_file()
    assert any((root / "cache" / "llm").rglob("*.json"))
    assert (root / "cache" / "embeddings.sqlite").is_file()
    assert _tree(REPO_ROOT / "data") == committed
    manifest = json.loads((root / "output" / "index.json").read_text(encoding="utf-8"))
    assert manifest["settings"]["project"]["input"] == "input"


def test_the_gitignore_keeps_the_recorded_replies(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    init_project(root)
    (root / "cache" / "llm").mkdir(parents=True)
    (root / "cache" / "llm" / "reply.json").write_text("{}")
    (root / "output").mkdir()
    (root / "output" / "x.parquet").write_text("")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    ignored = subprocess.run(
        ["git", "-C", str(root), "status", "--porcelain", "--ignored", "--untracked-files=all"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "!! output/" in ignored
    assert "?? cache/llm/reply.json" in ignored
