"""The README and docs/ as files a user follows: every relative link leads to a file (and
heading) that exists, the README stays a short guide, and what its first screen tells a new
user to type is accepted by the package: the commands by the CLI's parser, the Python by
``Workbench``'s signatures, the endpoint block by the settings loader."""

from __future__ import annotations

import ast
import inspect
import os
import re
import shlex
import unicodedata
from pathlib import Path

import pytest

from graphrag.settings import load_settings
from workbench import Workbench
from workbench.cli import build_parser
from workbench.project import init_project

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
MAX_README_LINES = 300
FIRST_SCREEN = 60  # lines of the README a new user reads before scrolling on

FENCE = re.compile(r"^(```|~~~)")
LINK = re.compile(r'\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)')  # [text](target "title"), images too
INLINE_CODE = re.compile(r"`[^`]*`")


def _outside_fences(text: str) -> list[tuple[int, str]]:
    """Return (line number, line) of the text outside fenced code blocks."""
    lines, fenced = [], False
    for number, line in enumerate(text.splitlines(), start=1):
        if FENCE.match(line.strip()):
            fenced = not fenced
        elif not fenced:
            lines.append((number, line))
    return lines


def _blocks(text: str) -> list[tuple[str, str]]:
    """Return (language, body) of each fenced block the text opens and closes."""
    blocks, language, body = [], None, []
    for line in text.splitlines():
        if FENCE.match(line.strip()):
            if language is None:
                language, body = line.strip()[3:].strip(), []
            else:
                blocks.append((language, "\n".join(body)))
                language = None
        elif language is not None:
            body.append(line)
    return blocks


def slug(heading: str) -> str:
    """Return GitHub's anchor of a heading: lower case, punctuation dropped, spaces to -."""
    text = INLINE_CODE.sub(lambda m: m.group(0)[1:-1], heading.strip()).lower()
    kept = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in ("L", "N"))
    return kept.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Return the anchors of a Markdown page's headings (a repeated one gets -1, -2, ...)."""
    seen: dict[str, int] = {}
    found = set()
    for _, line in _outside_fences(page.read_text(encoding="utf-8")):
        match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not match:
            continue
        base = slug(match.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def _links(page: Path) -> list[tuple[int, str]]:
    """Return (line number, target) of each Markdown link outside code (a link whose text is
    a code span keeps its target: the span is removed, the brackets stay)."""
    return [
        (number, match.group(1))
        for number, line in _outside_fences(page.read_text(encoding="utf-8"))
        for match in LINK.finditer(INLINE_CODE.sub("", line))
    ]


def broken_links(page: Path, root: Path = ROOT) -> list[str]:
    """Return "page:line: target (why)" for each relative link that leads nowhere (the page
    named relative to ``root``)."""
    broken = []
    for number, target in _links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        where = f"{page.relative_to(root)}:{number}: {target}"
        if not resolved.exists():
            broken.append(f"{where} (no such file)")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(f"{where} (no heading with that anchor)")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    assert broken_links(page) == []


def test_the_link_checker_finds_a_missing_file_and_a_missing_heading(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# A `code` Title: here\n\n## Twice\n\n## Twice\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](other.md#a-code-title-here) [ok](other.md#twice-1) [web](https://x.org/y)\n"
        "[gone](missing.md) [bad anchor](other.md#nowhere)\n"
        "```\n[in code](also-missing.md)\n```\n"
        "`[in a code span](missing-too.md)` [self](#no-such-heading)\n"
    )
    assert broken_links(page, root=tmp_path) == [
        "page.md:2: missing.md (no such file)",
        "page.md:2: other.md#nowhere (no heading with that anchor)",
        "page.md:6: #no-such-heading (no heading with that anchor)",
    ]


def test_the_readme_is_a_short_guide() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_README_LINES, f"README.md has {len(lines)} lines"


def _first_screen() -> str:
    return "\n".join(README.read_text(encoding="utf-8").splitlines()[:FIRST_SCREEN])


def quickstart_lines() -> list[list[str]]:
    """Return the shell commands of the README's first screen, each as its words (comments
    dropped)."""
    return [
        words
        for language, body in _blocks(_first_screen())
        if language in ("bash", "sh", "shell", "console")
        for line in body.splitlines()
        if (words := shlex.split(line, comments=True))
    ]


def quickstart_commands() -> list[list[str]]:
    """Return the `graphrag ...` commands of the first screen without `graphrag` itself."""
    return [words[1:] for words in quickstart_lines() if words[0] == "graphrag"]


def test_the_quickstart_commands_parse() -> None:
    """The own-corpus quickstart is on the first screen, and the CLI accepts every command of
    it as written: init, index, query, eval on a project folder."""
    commands = quickstart_commands()
    parser = build_parser()
    for words in commands:
        try:
            parser.parse_args(words)
        except SystemExit:
            pytest.fail(f"the CLI does not parse the README's `graphrag {shlex.join(words)}`")
    named = {words[0] for words in commands}
    assert {"init", "index", "query", "eval"} <= named


def test_the_quickstart_puts_documents_where_init_and_index_look(tmp_path: Path) -> None:
    """The folder the quickstart copies documents into is the input folder `init` writes
    and `index` reads by default (setting project.input)."""
    (project,) = [words[1] for words in quickstart_commands() if words[0] == "init"]
    (copy,) = [words for words in quickstart_lines() if words[0] == "cp"]
    target = Path(copy[-1])
    written = init_project(tmp_path / project)
    assert target.parts[0] == project and tmp_path / target in written
    settings = load_settings(root=tmp_path / project, env={})
    assert settings.resolve_path(settings.project.input) == (tmp_path / target).resolve()


def test_the_scripts_the_first_screen_names_exist_and_run() -> None:
    """The set-up, the main job and the tests are named on the first screen, and each script
    it names is in the repository, executable."""
    named = set(re.findall(r"\bscripts/[\w.-]+\.sh\b", _first_screen()))
    assert {"scripts/setup.sh", "scripts/demo.sh", "scripts/test.sh"} <= named
    for script in named:
        assert os.access(ROOT / script, os.X_OK), f"{script} is missing or not executable"


def _calls(tree: ast.AST) -> list[ast.Call]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call)]


def _bind(function: object, call: ast.Call, leading: tuple = ()) -> None:
    """Bind the call's literal arguments to ``function``'s signature (TypeError if they
    do not fit)."""
    args = [ast.literal_eval(a) for a in call.args]
    kwargs = {k.arg: ast.literal_eval(k.value) for k in call.keywords if k.arg}
    inspect.signature(function).bind(*leading, *args, **kwargs)


def test_the_quickstart_python_fits_the_workbench() -> None:
    """The Python on the first screen builds a Workbench and calls its methods with
    arguments their signatures accept."""
    (python,) = [body for language, body in _blocks(_first_screen()) if language == "python"]
    tree = ast.parse(python)
    made = [c for c in _calls(tree) if isinstance(c.func, ast.Name) and c.func.id == "Workbench"]
    assert made, "the quickstart's Python builds no Workbench"
    for call in made:
        _bind(Workbench.__init__, call, leading=(None,))
    used = [
        c
        for c in _calls(tree)
        if isinstance(c.func, ast.Attribute)
        and isinstance(c.func.value, ast.Name)
        and c.func.value.id == "wb"
    ]
    assert {c.func.attr for c in used} >= {"index", "query"}
    for call in used:
        _bind(getattr(Workbench, call.func.attr), call, leading=(None,))


def test_the_endpoint_block_is_valid_settings(tmp_path: Path) -> None:
    """The TOML on the first screen names the chat, judge and embedding endpoints, and the
    settings loader takes it as it is."""
    (toml,) = [body for language, body in _blocks(_first_screen()) if language == "toml"]
    for section in ("[llm]", "[judge]", "[embeddings]"):
        assert section in toml
    path = tmp_path / "graphrag.toml"
    path.write_text(toml, encoding="utf-8")
    settings = load_settings(path, env={})
    assert settings.llm.base_url and settings.judge.base_url
    assert settings.embeddings.base_url
