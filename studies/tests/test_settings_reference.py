"""The settings reference (docs/configuration.md) is generated from the settings dataclasses and
fails loudly when it is stale or a setting has no meaning written under it."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass, field
from typing import Literal

import pytest

from graphrag.settings import REPO_ROOT, SettingsError, load_settings
from studies.settings_reference import (
    COMMAND,
    REFERENCE_PATH,
    MissingDocError,
    render,
    sections,
    settings_count,
)


@dataclass
class _Method:
    """A method's own settings."""

    top_k: int = 3
    """Chunks the method shows the model."""


@dataclass
class _Section:
    """A section of the toy settings."""

    mode: Literal["fast", "exact"] = "fast"
    """How it goes."""
    names: list[str] = field(default_factory=lambda: ["a|b"])
    """Names it reads."""
    weights: dict[str, float] = field(default_factory=dict)
    """Weight by name."""
    method: _Method = field(default_factory=_Method)


@dataclass
class _Toy:
    section: _Section = field(default_factory=_Section)


@dataclass
class _Undocumented:
    documented: bool = True
    """Something."""
    # a comment is not a meaning
    forgotten: int = 1


@dataclass
class _ToyWithGap:
    gap: _Undocumented = field(default_factory=_Undocumented)


def test_the_committed_reference_is_the_generated_one():
    assert REFERENCE_PATH.is_file(), f"{REFERENCE_PATH} is missing: run {COMMAND}"
    assert REFERENCE_PATH.read_text(encoding="utf-8") == render(), (
        f"docs/configuration.md is stale: run {COMMAND}"
    )


def test_count_prints_one_number_per_row_of_the_reference():
    done = subprocess.run(
        [sys.executable, "-m", "studies.settings_reference", "--count"],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    count = int(done.stdout)
    assert count == settings_count() == sum(len(s.settings) for s in sections())
    rows = [line for line in render().splitlines() if line.startswith("| `")]
    assert len(rows) == count


def test_a_section_renders_names_env_vars_values_defaults_and_meanings():
    toy = sections(_Toy)
    assert [(s.name, s.intro) for s in toy] == [
        ("section", "A section of the toy settings."),
        ("section.method", "A method's own settings."),
    ]
    mode, names, weights = toy[0].settings
    assert (mode.name, mode.env) == ("section.mode", "GRAPHRAG_SECTION__MODE")
    assert (mode.kind, mode.default) == ('one of `"fast"`, `"exact"`', '"fast"')
    assert (names.kind, names.default, names.meaning) == (
        "list of text",
        '["a|b"]',
        "Names it reads.",
    )
    assert (weights.kind, weights.default) == ("table of text → number", "{}")
    (top_k,) = toy[1].settings
    assert (top_k.name, top_k.env) == ("section.method.top_k", "GRAPHRAG_SECTION__METHOD__TOP_K")
    text = render(_Toy)
    assert "## `[section.method]`" in text
    assert '`["a\\|b"]`' in text  # a "|" would end the table cell


def test_a_setting_without_a_docstring_stops_the_generator():
    with pytest.raises(MissingDocError, match=r"gap\.forgotten has no docstring"):
        render(_ToyWithGap)


def test_an_environment_variable_reaches_a_sub_section():
    """GRAPHRAG_A__B__C is read as the setting a.b.c, as the reference names it."""
    with pytest.raises(SettingsError, match=r"unknown setting env:GRAPHRAG\.query\.no_such_method"):
        load_settings(env={"GRAPHRAG_QUERY__NO_SUCH_METHOD__TOP_K": "3"})
