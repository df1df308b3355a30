"""The packages' shape (the core, graphrag/, and the workbench over it): no module past 400
lines, and imports at the top of a module, where a reader (and import-linter's layers contract)
sees them, except for a short list of optional or heavy dependencies that only some paths
need."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = (ROOT / "graphrag", ROOT / "workbench")
MAX_LINES = 400

# Top-level package names a function may import, each for a reason a user would feel.
IMPORTED_WHEN_NEEDED = {
    "xllamacpp": "the [embedded] extra; only the server's child process loads it",
    "pyvis": "the [notebooks] extra; only the interactive graph page",
    "IPython": "the [notebooks] extra; only inside a notebook",
    "ragas": "about 2.5 s to import; only the judged metrics",
    "sentence_transformers": "about 6 s to import (torch); only when text is embedded",
    "transformers": "comes with sentence_transformers; only when text is embedded",
    "graspologic": "about 5 s to import; only when communities are detected",
    "jieba": "its tagger loads about 1.2 s of tables; only Chinese text",
    "mcp": "the MCP SDK (protocol models, starlette, uvicorn) adds about a fifth to the CLI's "
    "start-up; only `graphrag mcp`",
    "neo4j": "about 0.5 s to import; only a graph database at a bolt:// or neo4j:// URL",
}


def _modules() -> list[Path]:
    return sorted(path for package in PACKAGES for path in package.rglob("*.py"))


def _imports_inside_functions(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.Import):
                found += [(node.lineno, alias.name) for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                found.append((node.lineno, "." * node.level + (node.module or "")))
    return sorted(set(found))


def test_no_module_is_longer_than_400_lines():
    long = [
        f"{path.relative_to(ROOT)}: {lines} lines"
        for path in _modules()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    ]
    assert not long, f"modules over {MAX_LINES} lines (split them):\n" + "\n".join(long)


def test_imports_sit_at_the_top_of_a_module():
    inside = []
    for path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for line, name in _imports_inside_functions(tree):
            if name.split(".")[0] not in IMPORTED_WHEN_NEEDED:
                inside.append(f"{path.relative_to(ROOT)}:{line}: {name}")
    assert not inside, (
        "imports inside functions (move them to the top; a cycle they hid is a layering "
        "problem to solve, see the import contract in pyproject.toml):\n" + "\n".join(inside)
    )


def test_the_detector_sees_an_import_inside_a_function():
    tree = ast.parse("import os\n\ndef f():\n    import json\n    from . import x\n")
    assert _imports_inside_functions(tree) == [(4, "json"), (5, ".")]


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported_modules(tree: ast.AST, names: set[str]) -> set[str]:
    """Return the packages' modules (and their parent packages) that ``tree`` imports."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    for name in list(found):
        while "." in name:
            name = name.rpartition(".")[0]
            found.add(name)
    return found & names


def test_every_module_serves_the_package():
    """A module of graphrag/ or workbench/ that only studies/ or tests import is study code (it
    belongs in studies/). Three ways in need no import: ``python -m graphrag``, the embedded
    server's child process (started by name from llm/embedded/server.py) and the retrieval
    methods, which the registry finds by walking graphrag.query."""
    paths = {_module_name(path): path for path in _modules()}
    imported = set()
    for path in paths.values():
        imported |= _imported_modules(ast.parse(path.read_text(encoding="utf-8")), set(paths))
    server = (ROOT / "graphrag" / "llm" / "embedded" / "server.py").read_text(encoding="utf-8")
    started = {name for name in paths if f'"{name}"' in server}
    discovered = {
        name
        for name, path in paths.items()
        if name.startswith("graphrag.query.")
        and re.search(r"^@(registry\.)?register\(", path.read_text(encoding="utf-8"), re.M)
    }
    unused = sorted(set(paths) - imported - started - discovered - {"graphrag.__main__"})
    assert not unused, "modules no other module of the packages imports:\n" + "\n".join(unused)
