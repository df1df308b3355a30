"""Every setting as data: its dotted name, environment variable, type, default and meaning.

A setting's meaning is the attribute docstring under its field, read from the source with
:mod:`ast` (Python drops it); a setting without one is an error. docs/configuration.md
(``studies/settings_reference.py``) and the commented settings file ``graphrag init`` writes
are both rendered from :func:`sections`.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import json
import textwrap
import typing
from pathlib import Path
from typing import Any, Literal

from graphrag.settings.load import NOT_SETTINGS, Settings, repo_relative


class MissingDocError(ValueError):
    """A setting has no attribute docstring; the message names it and says where to add it."""


@dataclasses.dataclass(frozen=True)
class Setting:
    """One row of the reference."""

    name: str  # dotted TOML name, e.g. "query.top_k"
    env: str
    kind: str
    default: str
    meaning: str


@dataclasses.dataclass(frozen=True)
class Section:
    """One table of the reference: a ``[section]`` or a ``[section.sub]`` and its settings."""

    name: str
    intro: str
    settings: list[Setting]


@functools.cache
def _class_node(cls: type) -> ast.ClassDef:
    """Return the class statement of ``cls`` (its source parsed: attribute docstrings are
    dropped by Python)."""
    return ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0]


def _one_line(text: str) -> str:
    return " ".join(inspect.cleandoc(text).split())


def attribute_docs(cls: type) -> dict[str, str]:
    """Return field name -> the docstring on the line after the field, for ``cls``."""
    docs: dict[str, str] = {}
    body = _class_node(cls).body
    for statement, following in zip(body, body[1:], strict=False):
        if (
            isinstance(statement, ast.AnnAssign)
            and isinstance(statement.target, ast.Name)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            docs[statement.target.id] = _one_line(following.value.value)
    return docs


def class_doc(cls: type) -> str:
    """Return the first paragraph of the docstring written in ``cls``'s source, or ""
    (a dataclass without one gets a generated ``__doc__``, which is no documentation)."""
    doc = ast.get_docstring(_class_node(cls)) or ""
    return _one_line(doc.split("\n\n")[0])


def type_text(annotation: Any) -> str:
    """Return what a user may write for a setting of this annotation."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Literal:
        return "one of " + ", ".join(f"`{toml_value(a)}`" for a in args)
    if origin is list:
        return f"list of {type_text(args[0])}"
    if origin is dict:
        return f"table of {type_text(args[0])} → {type_text(args[1])}"
    return {str: "text", int: "integer", float: "number", bool: "true/false"}.get(
        annotation, getattr(annotation, "__name__", str(annotation))
    )


def toml_value(value: Any) -> str:
    """Return ``value`` as it is written in a TOML file."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        pairs = ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items())
        return "{ " + pairs + " }"
    return repr(value)


def sections(root: type = Settings) -> list[Section]:
    """Return the reference's tables: one per section and sub-section, in declaration order."""
    return _walk(root, [], None)[1:]  # the root's own table holds no setting


def _walk(cls: type, path: list[str], field_doc: str | None) -> list[Section]:
    hints, docs = typing.get_type_hints(cls), attribute_docs(cls)
    rows: list[Setting] = []
    nested: list[Section] = []
    for field in dataclasses.fields(cls):
        if cls is Settings and field.name in NOT_SETTINGS:
            continue
        annotation = hints[field.name]
        name = ".".join([*path, field.name])
        if dataclasses.is_dataclass(annotation):
            nested += _walk(annotation, [*path, field.name], docs.get(field.name))
            continue
        if "sections" in field.metadata:  # sub-sections registered by name ([query.<method>])
            for sub, sub_cls in sorted(field.metadata["sections"].items()):
                if sub_cls is not None:
                    nested += _walk(sub_cls, [*path, sub], None)
            continue
        if field.name not in docs:
            where = f"{repo_relative(inspect.getsourcefile(cls) or '?')}, class {cls.__qualname__}"
            raise MissingDocError(
                f"setting {name} has no docstring: write one line saying what it means for a "
                f"user directly under the field ({where}), then run "
                "python -m studies.settings_reference --write"
            )
        rows.append(
            Setting(
                name=name,
                env="GRAPHRAG_" + "__".join(p.upper() for p in [*path, field.name]),
                kind=type_text(annotation),
                default=toml_value(
                    field.default_factory()
                    if field.default is dataclasses.MISSING
                    else field.default
                ),
                meaning=docs[field.name],
            )
        )
    intro = field_doc or class_doc(cls)
    return [Section(".".join(path), intro, rows), *nested]


def settings_count(root: type = Settings) -> int:
    """Return how many settings a user can set."""
    return sum(len(s.settings) for s in sections(root))


def _comment(text: str, width: int = 96) -> list[str]:
    """``text`` as ``#`` lines of at most ``width`` characters (a longer word on its own)."""
    wrapped = textwrap.wrap(text, width - 2, break_long_words=False, break_on_hyphens=False)
    return ["# " + line for line in wrapped]


def settings_file(values: dict[str, str] | None = None, heading: str = "") -> str:
    """Return a TOML file listing every setting, commented out at its default with its
    meaning above it; ``values`` (dotted name -> TOML text) are written uncommented."""
    values = dict(values or {})
    out = _comment(heading) + [""] if heading else []
    for section in sections():
        out += [f"[{section.name}]", *(_comment(section.intro) if section.intro else [])]
        for setting in section.settings:
            key = setting.name.rpartition(".")[2]
            out += _comment(setting.meaning)
            if setting.name in values:
                out.append(f"{key} = {values.pop(setting.name)}")
            else:
                out.append(f"# {key} = {setting.default}")
        out.append("")
    if values:
        raise KeyError(f"no setting named {', '.join(sorted(values))}")
    return "\n".join(out)


def setting_value(settings: Settings, name: str) -> Any:
    """The value of the setting ``name`` (dotted, as in :func:`sections`) in ``settings``."""
    node: Any = settings
    for part in name.split("."):
        methods = getattr(node, "methods", None)
        node = (
            methods[part] if isinstance(methods, dict) and part in methods else getattr(node, part)
        )
    return node


def effective_settings(settings: Settings, changed_only: bool = False) -> list[str]:
    """The settings as TOML, ``key = value  # where it came from``, for every setting (or
    only those not at their default), by table; environment values name their variable."""
    lines = [f"# project root: {settings.root}"]
    for section in sections():
        rows = []
        for setting in section.settings:
            source = settings.source(setting.name)
            if changed_only and source == "default":
                continue
            if source == "environment":
                source = setting.env
            else:
                source = _relative(source, settings)
            value = toml_value(setting_value(settings, setting.name))
            rows.append(f"{setting.name.rpartition('.')[2]} = {value}  # {source}")
        if rows:
            lines += ["", f"[{section.name}]", *rows]
    return lines


def _relative(source: str, settings: Settings) -> str:
    """A settings file's path relative to the project root when it lies inside it."""
    try:
        return str(Path(source).resolve().relative_to(settings.root))
    except ValueError:
        return source
