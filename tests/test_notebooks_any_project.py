"""Notebooks 1-3 run on a project other than the demo: papermill executes them on the second
small corpus (data/musique_mini, a copy in a temporary folder) in replay, from the replies and
vectors recorded in that project's own cache. nbval checks the notebooks on the demo; this
checks that their one parameter cell is all a user changes, and that the sections the project
cannot fill (no gold graph, no question of a type, no judge) say so and are skipped. Notebook 4
then reads the report notebook 3 wrote in the project: any project's reports, not only the
committed ones."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from graphrag.settings import REPO_ROOT

PROJECT = REPO_ROOT / "data" / "musique_mini"
NOTEBOOKS = REPO_ROOT / "notebooks"
# what a run writes, never copied into the test's project
WRITTEN = ("output", "notebook_output", "reports", "embeddings.sqlite", "hashes.*", ".locks")


def cell_texts(notebook: Path) -> list[str]:
    """Return every code cell's text outputs (stream, plain text, Markdown), one per cell."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    texts = []
    for cell in cells:
        parts = []
        for output in cell.get("outputs", []):
            parts.append("".join(output.get("text", "")))
            data = output.get("data", {})
            parts += ["".join(data.get(kind, "")) for kind in ("text/plain", "text/markdown")]
        texts.append("\n".join(parts))
    return texts


def run_notebook(
    name: str, project: Path, out: Path, *parameters: str
) -> subprocess.CompletedProcess:
    """Run notebook ``name`` with papermill on ``project`` (its parameters beside PROJECT)."""
    # the kernel imports this checkout's graphrag (and notebooks/project.py from its cwd)
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    env.pop("GRAPHRAG_CACHE", None)
    return subprocess.run(
        [str(Path(sys.executable).parent / "papermill"), str(NOTEBOOKS / f"{name}.ipynb"),
         str(out), "-k", "python3", "--cwd", str(NOTEBOOKS), "-p", "PROJECT", str(project),
         *parameters],
        env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip


def copy_project(tmp: Path, leave_out: tuple[str, ...] = ()) -> Path:
    """Return a copy of the second project in ``tmp``, without what runs wrote."""
    project = tmp / "musique_mini"
    shutil.copytree(PROJECT, project, ignore=shutil.ignore_patterns(*WRITTEN, *leave_out))
    return project


@pytest.fixture(scope="module")
def executed(tmp_path_factory) -> dict[str, str]:
    """Run notebooks 1, 2 and 3 in order on a copy of the project, replaying its cache, then
    notebook 4 on the report notebook 3 wrote; return each one's outputs joined."""
    if shutil.which("papermill", path=str(Path(sys.executable).parent)) is None:
        pytest.fail("papermill is not installed: pip install -e '.[dev]'")
    tmp = tmp_path_factory.mktemp("any_project")
    project = copy_project(tmp)
    replay = ["-p", "CACHE", "replay"]
    own_report = ["-p", "REPORTS", str(project / "notebook_output"), "-p", "EVAL_REPORT",
                  "report_notebook"]  # fmt: skip
    outputs = {}
    for name, parameters in (
        ("01_build_and_explore_index", replay),
        ("02_query_modes", replay),
        ("03_compare_methods", replay),
        ("04_musique_multihop", own_report),
    ):
        out = tmp / f"{name}.ipynb"
        run = run_notebook(name, project, out, *parameters)
        assert run.returncode == 0, f"{name} failed on {project}:\n{run.stderr[-4000:]}"
        outputs[name] = "\n".join(cell_texts(out))
    return outputs


def test_notebook_1_indexes_the_project_and_skips_the_gold_graph(executed) -> None:
    text = executed["01_build_and_explore_index"]
    assert "documents 9, chunks 9" in text  # the project's nine paragraphs, not the demo's 12
    assert "notebook_output/output_graph.html:" in text  # the page is written in the project
    assert "no gold graph (gold_graph.json): extraction quality skipped" in text
    assert "Kestrel" not in text


def test_notebook_2_asks_every_method_and_skips_the_missing_question_types(executed) -> None:
    text = executed["02_query_modes"]
    assert "Q: Where did the band form that made the live album Maiden Japan?" in text
    for method in ("naive", "hyde", "multi_query", "local", "global", "drift", "ppr", "router"):
        assert f"--- {method}" in text, method
    assert "no local question in the project's question set: this section is skipped" in text
    assert "no global question in the project's question set: this section is skipped" in text
    assert "2hop__243339_774871 (multi_hop)" in text  # the multi-hop section ran on its question


def test_notebook_3_evaluates_the_project_with_its_own_settings(executed) -> None:
    text = executed["03_compare_methods"]
    # no recorded_* files: the project's [eval] methods, every question, no RAGAS judge
    assert "3 questions x 3 methods = 9 answers" in text
    assert "no RAGAS metric was asked for: no judge to check, this section is skipped" in text
    assert "no pairwise judgements in this run" in text
    assert "this project's index is the LLM-free graph already" in text
    assert (
        "this reading compares naive, hyde, multi_query, local, global; the run evaluated "
        "global, local, naive: it is skipped" in text
    )


def test_notebook_4_reads_the_report_the_project_wrote(executed) -> None:
    text = executed["04_musique_multihop"]
    assert "3 questions in the set: 3 with 2 hops" in text
    assert "3 answered in this report by 3 methods (naive, local, global)" in text
    assert "Where did the band form that made the live album Maiden Japan?" in text or (
        "Jump for Glory" in text or "performer of Decade" in text
    )  # the hop-by-hop section ran on one of its questions
    assert "no retrieval report at musique_retrieval: the full-size sections are skipped" in text
    assert "no cross-fitting report at musique_retrieval_ppr_crossfit" in text


def test_a_project_without_questions_skips_what_needs_them(tmp_path) -> None:
    """With no question set, notebooks 1 and 2 run (no LLM call: the graph is LLM-free) and
    say what they skip; notebook 3, which is all evaluation, stops naming the missing file."""
    project = copy_project(tmp_path, leave_out=("questions.jsonl",))
    for name in ("01_build_and_explore_index", "02_query_modes"):
        run = run_notebook(name, project, tmp_path / f"{name}.ipynb", "-p", "CACHE", "replay")
        assert run.returncode == 0, f"{name} failed on {project}:\n{run.stderr[-4000:]}"
    text = "\n".join(cell_texts(tmp_path / "02_query_modes.ipynb"))
    assert "no question set (questions.jsonl): the sections that compare the methods" in text
    assert "no QUESTION given and no question set to take one from" in text
    assert text.count("question in the project's question set: this section is skipped") == 3
    run = run_notebook("03_compare_methods", project, tmp_path / "03.ipynb", "-p", "CACHE",
                       "replay")  # fmt: skip
    assert run.returncode != 0
    assert "this notebook evaluates a question set; the project has none" in run.stderr
