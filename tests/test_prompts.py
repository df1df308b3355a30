"""Prompts: every builder renders byte for byte what it rendered before the text moved into
template files (tests/data/prompt_renders.json, written by tests/prompt_renders.py from the
code before the move), so the recorded LLM cache replays untouched; a user's prompt folder
overrides a prompt by name and is checked against it; the templates export to a folder."""

from __future__ import annotations

import filecmp
import inspect
import json
import string
from collections.abc import Iterator
from pathlib import Path

import pytest
from prompt_renders import FIXTURE, render

from graphrag import prompts
from graphrag.index.extract.records import parse_records
from graphrag.prompts import PromptTemplateError, load_template
from graphrag.prompts.loader import PACKAGED_DIR
from graphrag.settings import load_settings
from graphrag.text.lang import chinese
from workbench.session import Workbench

RENDERS = json.loads(FIXTURE.read_text(encoding="utf-8"))

# Constants whose words now live only in the templates, where the renders below cover them.
MOVED_INTO_TEMPLATES = {
    "FACTS_RULE": ["summarize_descriptions", "summarize_relationship", "community_report"],
}


@pytest.fixture(autouse=True)
def packaged_prompts() -> Iterator[None]:
    """Every test starts and ends with the packaged prompts only (the folder is process-wide)."""
    prompts.use_prompt_dir(None)
    yield
    prompts.use_prompt_dir(None)


def _plain(value: object) -> object:
    return json.loads(json.dumps(value))


# ---------------------------------------------------------------- byte-identical to before


@pytest.mark.parametrize(
    "case", RENDERS["cases"], ids=[f"{c['call']}-{i}" for i, c in enumerate(RENDERS["cases"])]
)
def test_every_builder_renders_what_it_rendered_before(case: dict) -> None:
    assert _plain(render(case["call"], case["args"], case["kwargs"])) == case["result"]


def test_every_constant_is_what_it_was_before() -> None:
    for name, before in RENDERS["constants"].items():
        if name in MOVED_INTO_TEMPLATES:
            for template in MOVED_INTO_TEMPLATES[name]:
                assert before in load_template(template).sections["system"].template, template
            continue
        value = getattr(prompts, name)
        assert _plain(value) == before, name


def test_the_fixture_covers_every_builder() -> None:
    builders = {
        name
        for name, value in vars(prompts).items()
        if inspect.isfunction(value) and not name.startswith("_")
    }
    loading = {
        "export_templates",
        "in_language",
        "load_template",
        "packaged_template",
        "system_and_user",
        "prompt_dir",
        "template_names",
        "use_prompt_dir",
    }
    assert builders - loading == {case["call"] for case in RENDERS["cases"]}


# ---------------------------------------------------------------- the packaged templates


def test_every_template_says_which_placeholders_it_takes() -> None:
    names = prompts.template_names()
    assert len(names) == 47 and "answer" in names and "extract_graph_records" in names
    for name in names:
        template = load_template(name)
        header = (PACKAGED_DIR / f"{name}.txt").read_text(encoding="utf-8").split("\n=== ")[0]
        assert header.startswith(f"# {name}: ") and "Placeholders:" in header, name
        for section in template.sections:
            for placeholder in template.placeholders(section):
                assert f"${placeholder}" in header, (name, section, placeholder)


def test_the_docs_name_every_template() -> None:
    docs = (Path(__file__).resolve().parents[1] / "docs" / "prompts.md").read_text()
    for name in prompts.template_names():
        assert f"| `{name}` |" in docs, name


def test_a_template_keeps_json_braces_and_drops_its_header() -> None:
    system = load_template("global_map").text("system")
    assert '{"points": []}' in system and "#" not in system
    assert prompts.global_map("q?", "[1] r")[0]["content"] == system


# ---------------------------------------------------------------- the user's prompt folder


def _override(folder: Path, name: str, edit: tuple[str, str]) -> Path:
    """Write the packaged template ``name`` into ``folder`` with one text replaced."""
    folder.mkdir(parents=True, exist_ok=True)
    text = (PACKAGED_DIR / f"{name}.txt").read_text(encoding="utf-8")
    assert edit[0] in text
    path = folder / f"{name}.txt"
    path.write_text(text.replace(*edit), encoding="utf-8")
    return path


def test_an_override_changes_its_prompt_and_no_other(tmp_path: Path) -> None:
    before = prompts.answer("Who chairs it?", "[1] Lena Ortiz chairs it.")
    other = prompts.drift_reduce("Who chairs it?", "[1] Lena Ortiz does.")
    _override(tmp_path, "answer", ("You answer a question", "You answer one question"))
    prompts.use_prompt_dir(tmp_path)
    after = prompts.answer("Who chairs it?", "[1] Lena Ortiz chairs it.")
    assert after[0]["content"] == before[0]["content"].replace(
        "You answer a question", "You answer one question"
    )
    assert after[1] == before[1]  # the question and context are still filled in
    assert prompts.drift_reduce("Who chairs it?", "[1] Lena Ortiz does.") == other
    prompts.use_prompt_dir(None)
    assert prompts.answer("Who chairs it?", "[1] Lena Ortiz chairs it.") == before


def test_an_override_of_a_worked_example_reaches_the_records_prompts(tmp_path: Path) -> None:
    _override(tmp_path, "extract_graph_records", ("Lena Ortiz", "Lena Ortez"))
    prompts.use_prompt_dir(tmp_path)
    messages = prompts.extract_graph_records("A text.", ["person"])
    assert "Lena Ortez" in messages[1]["content"] and "Lena Ortez" in messages[2]["content"]
    assert prompts.EXAMPLE_RECORDS != messages[2]["content"]  # the constant stays packaged


def test_an_override_missing_a_placeholder_is_an_error_naming_the_file(tmp_path: Path) -> None:
    path = _override(tmp_path, "answer", ("Context:\n$context\n\n", ""))
    with pytest.raises(PromptTemplateError, match=r"answer\.txt: section 'user' lacks") as err:
        prompts.use_prompt_dir(tmp_path)
    assert str(path) in str(err.value) and "$context" in str(err.value)
    assert prompts.prompt_dir() is None  # the folder was refused, the packaged prompts stay


def test_an_override_edited_after_it_was_checked_is_checked_again(tmp_path: Path) -> None:
    path = _override(tmp_path, "rephrase", ("$n different ways", "several different ways"))
    with pytest.raises(PromptTemplateError, match=r"lacks placeholder\(s\) \$n"):
        prompts.use_prompt_dir(tmp_path)
    path.write_text((PACKAGED_DIR / "rephrase.txt").read_text(encoding="utf-8"))
    prompts.use_prompt_dir(tmp_path)
    _override(tmp_path, "rephrase", ("$question", "$questoin"))
    with pytest.raises(
        PromptTemplateError,
        match=r"rephrase\.txt: .* lacks .*\$question .*; it uses unknown .*\$questoin",
    ):
        prompts.rephrase("Who?", 3)


@pytest.mark.parametrize(
    ("name", "edit", "message"),
    [
        ("answer", ("=== length_paragraphs", "=== length_essay"), r"missing: \['length_parag"),
        (
            "hypothetical_passage",
            ("Write a short", "Costs $5: write a short"),
            r"'\$' that starts no placeholder",
        ),
        (
            "relationships_after_loop",
            ("=== user\n", ""),
            r"relationships_after_loop\.txt:\d+: text before the first",
        ),
    ],
)
def test_a_malformed_override_is_an_error_naming_the_file(
    tmp_path: Path, name: str, edit: tuple[str, str], message: str
) -> None:
    _override(tmp_path, name, edit)
    with pytest.raises(PromptTemplateError, match=message):
        prompts.use_prompt_dir(tmp_path)


def test_a_misspelt_override_or_a_missing_folder_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "anwser.txt").write_text("=== system\nx\n")
    with pytest.raises(PromptTemplateError, match=r"anwser\.txt: no prompt is named 'anwser'"):
        prompts.use_prompt_dir(tmp_path)
    with pytest.raises(PromptTemplateError, match=r"setting prompts\.dir"):
        prompts.use_prompt_dir(tmp_path / "nowhere")
    (tmp_path / "anwser.txt").unlink()
    (tmp_path / "README.md").write_text("notes")  # other files are the user's own business
    prompts.use_prompt_dir(tmp_path)
    assert prompts.prompt_dir() == tmp_path


def test_the_workbench_reads_the_prompt_folder_from_settings(tmp_path: Path) -> None:
    _override(tmp_path, "hypothetical_passage", ("three or four", "two or three"))
    settings = load_settings(env={"GRAPHRAG_PROMPTS__DIR": str(tmp_path)})
    assert settings.prompts.dir == str(tmp_path)
    Workbench(settings=settings)
    assert prompts.prompt_dir() == tmp_path
    assert "two or three" in prompts.hypothetical_passage("Who?")[0]["content"]
    Workbench(settings=load_settings(env={}))
    assert prompts.prompt_dir() is None
    assert "three or four" in prompts.hypothetical_passage("Who?")[0]["content"]


# ---------------------------------------------------------------- export


def test_export_writes_every_template_and_they_render_the_same(tmp_path: Path) -> None:
    written = prompts.export_templates(tmp_path / "my_prompts")
    assert sorted(p.stem for p in written) == prompts.template_names()
    for path in written:
        assert filecmp.cmp(path, PACKAGED_DIR / path.name, shallow=False)
    prompts.use_prompt_dir(tmp_path / "my_prompts")  # every exported file passes the checks
    for case in RENDERS["cases"]:
        assert _plain(render(case["call"], case["args"], case["kwargs"])) == case["result"]


def test_export_never_overwrites_a_users_edits_unless_asked(tmp_path: Path) -> None:
    prompts.export_templates(tmp_path)
    edited = tmp_path / "answer.txt"
    edited.write_text(edited.read_text().replace("You answer", "You reply"))
    with pytest.raises(FileExistsError, match=r"overwrite=True"):
        prompts.export_templates(tmp_path)
    assert "You reply" in edited.read_text()
    prompts.export_templates(tmp_path, overwrite=True)
    assert "You reply" not in edited.read_text()


def test_placeholders_are_string_template_names() -> None:
    template = load_template("drift_follow_up")
    assert template.placeholders("user") == {"context", "question", "follow_up"}
    assert isinstance(template.sections["user"], string.Template)


def test_a_chinese_question_gets_the_chinese_answer_prompt() -> None:
    """The answer prompt follows the question's language: a Chinese question gets answer_zh
    (asks for Chinese, keeps the [n] citations); English, or a language with no prompt of its
    own, gets answer, byte for byte as before."""
    context = "[1] 青澜湾海藻合作社成立于2015年。"
    chinese = prompts.answer("合作社哪一年成立？", context, "sentences", "zh")
    assert "用中文回答" in chinese[0]["content"] and "[1]" in chinese[0]["content"]
    assert chinese[1]["content"].endswith("问题：合作社哪一年成立？")
    english = prompts.answer("When was it founded?", context)
    assert english == prompts.answer("When was it founded?", context, "sentences", "en")
    assert english == prompts.answer("When was it founded?", context, "sentences", "fr")
    assert english[0]["content"].startswith("You answer a question using only")


def test_a_chinese_text_is_extracted_summarized_and_reported_with_chinese_prompts() -> None:
    """Extraction, the summaries and the report follow the text's language: a Chinese text
    gets Chinese instructions and a Chinese worked example (so no English example name can leak
    into its graph), with the configured types and the same record format; an English text
    gets the English prompts byte for byte (the fixture above)."""
    text = "舟山市青澜湾海藻养殖合作社成立于2015年，理事长林海燕介绍了合作社。"
    types = ["person", "organization"]
    english_names = ("Lena Ortiz", "Cliffport", "Anya Petrov", "Vardo")
    for messages in (
        prompts.extract_graph_records(text, types, "zh"),
        prompts.extract_graph_records_again(text, types, "zh"),
        prompts.extract_graph_records_packed([text, text], types, "zh"),
    ):
        system, example, shown, asked = messages
        assert "构建知识图谱" in system["content"]
        assert "实体：person, organization；" in system["content"]
        assert example["content"].startswith("文本：") and asked["content"].startswith("文本：")
        assert "青澜湾" in asked["content"] and "青澜湾" not in shown["content"]
        assert not any(name in m["content"] for m in messages for name in english_names)
        # the Chinese worked example is a reply the record parser reads, its names Chinese
        parsed = parse_records(shown["content"])
        assert len(parsed.entities) >= 5 and not parsed.malformed
        assert all(chinese.HAN.search(e["name"]) for e in parsed.entities)
    assert "每篇以编号开头" in messages[0]["content"]  # the packed note
    piped = prompts.in_pipe_style(prompts.extract_graph_records(text, types, "zh"))
    assert "entity|名称|类型|描述: " in piped[0]["content"] and "<|>" not in piped[2]["content"]
    after = prompts.relationships_after_loop(messages, "[1] (...)", "zh")
    assert after[-1]["content"].startswith("现在只写关系记录")
    summary = prompts.summarize_descriptions("林海燕", ["合作社理事长。"], 60, "zh")
    assert "中文描述" in summary[0]["content"] and summary[1]["content"].startswith("实体：林海燕")
    pair = prompts.summarize_relationship("林海燕", "合作社", ["理事长"], 60, "zh")
    assert "中文描述" in pair[0]["content"]
    report = prompts.community_report("entities\nid,entity\n1,林海燕", 5, language="zh")
    assert "内容用中文" in report[0]["content"] and "(entities 3, 7)" in report[0]["content"]
    english = "Lena Ortiz chairs the Dunmore Rowing Club."
    assert prompts.extract_graph_records(english, types) == prompts.extract_graph_records(
        english, types, "en"
    )
    assert prompts.in_language("community_report", "en") == "community_report"
    assert prompts.in_language("community_report", "fr") == "community_report"
    assert prompts.in_language("community_report", "zh") == "community_report_zh"


def test_global_and_drift_write_in_the_question_s_language() -> None:
    """Global search's map, reduce and merge and every DRIFT step ask for Chinese when the
    question is Chinese, with the same JSON keys, citations and placeholders; English gets the
    unsuffixed prompts, byte for byte (the fixture above), and so does a language with none."""
    q, zh = "青澜湾有哪些主题？", "zh"
    chinese = {
        "map": prompts.global_map(q, "[1] 报告", zh),
        "reduce": prompts.global_reduce(q, "- 要点 [1]", "paragraphs", zh),
        "merge": prompts.global_merge(q, ["甲 [1]。", "乙 [2]。"], "sentences", zh),
        "primer": prompts.drift_primer(q, "[1] 报告", 2, zh),
        "step": prompts.drift_follow_up(q, "谁？", "[1] 上下文", 2, zh),
        "reduce_drift": prompts.drift_reduce(q, "[1] 答案", zh),
    }
    for name, (system, user) in chinese.items():
        assert "中文" in system["content"], name
        assert user["content"].endswith(f"问题：{q}") or "主问题：" in user["content"], name
        assert "$" not in system["content"] + user["content"], name
    assert '{"points": []}' in chinese["map"][0]["content"]
    assert "分几个简短的段落" in chinese["reduce"][0]["content"]
    assert "最多六句话" in chinese["merge"][0]["content"]
    assert "草稿 A：\n甲 [1]。" in chinese["merge"][1]["content"]
    assert all(k in chinese["primer"][0]["content"] for k in ("answer", "score", "follow_ups"))
    assert "最多 2 个" in chinese["step"][0]["content"]
    for english, default in (
        (prompts.global_map("q?", "[1] r", "en"), prompts.global_map("q?", "[1] r")),
        (prompts.global_reduce("q?", "- p", "sentences", "fr"), prompts.global_reduce("q?", "- p")),
        (prompts.drift_reduce("q?", "[1] a", "en"), prompts.drift_reduce("q?", "[1] a")),
    ):
        assert english == default and "中文" not in english[0]["content"]
    assert set(prompts.NO_RELEVANT_REPORTS) == set(prompts.NO_DRIFT_ANSWERS) == {"en", "zh"}
