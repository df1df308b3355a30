"""The settings reference, docs/configuration.md, generated from the settings dataclasses.

A setting's meaning is the attribute docstring under its field, read from the source with
:mod:`ast` (Python drops it); a setting without one is an error.

    python -m studies.settings_reference --write    # rewrite docs/configuration.md
    python -m studies.settings_reference            # print the reference
    python -m studies.settings_reference --count    # print the number of settings
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import functools
import inspect
import json
import sys
import typing
from collections.abc import Iterator
from typing import Any, Literal

from graphrag.settings.load import REPO_ROOT, Settings, repo_relative

REFERENCE_PATH = REPO_ROOT / "docs" / "configuration.md"
COMMAND = "python -m studies.settings_reference --write"

INTRO = f"""\
# Configuration reference

Generated from the settings dataclasses in `graphrag/settings/` by
`{COMMAND}`; do not edit it by hand (a test fails when it differs
from the code).

Settings are read, lowest precedence first, from the defaults below, a TOML file
(`graphrag.toml` in the working directory, or the file named by `GRAPHRAG_CONFIG`), then
environment variables named as in the first column (a list or a table is given there as
JSON). `GRAPHRAG_CACHE=on|off|replay` is a shortcut for `cache.mode`. With no settings at all,
the embedded model answers, so a fresh checkout works offline. Servers of your own for the
answering model, the judge and the embeddings: [own-model.md](own-model.md).
"""


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
def _module_tree(module: str) -> ast.Module:
    return ast.parse(inspect.getsource(sys.modules[module]))


def _class_node(cls: type) -> ast.ClassDef:
    """Return the class statement of ``cls``, a module-level class."""
    body = _module_tree(cls.__module__).body
    return next(n for n in body if isinstance(n, ast.ClassDef) and n.name == cls.__name__)


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


def _default(field: dataclasses.Field[Any]) -> Any:
    if field.default is not dataclasses.MISSING:
        return field.default
    return field.default_factory()


def sections(root: type = Settings) -> list[Section]:
    """Return the reference's tables: one per section and sub-section, in declaration order."""
    return _walk(root, [], None)[1:]  # the root's own table holds no setting


def _walk(cls: type, path: list[str], field_doc: str | None) -> list[Section]:
    hints, docs = typing.get_type_hints(cls), attribute_docs(cls)
    rows: list[Setting] = []
    nested: list[Section] = []
    for field in dataclasses.fields(cls):
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
                f"user directly under the field ({where}), then run {COMMAND}"
            )
        rows.append(
            Setting(
                name=name,
                env="GRAPHRAG_" + "__".join(p.upper() for p in [*path, field.name]),
                kind=type_text(annotation),
                default=toml_value(_default(field)),
                meaning=docs[field.name],
            )
        )
    intro = field_doc or class_doc(cls)
    return [Section(".".join(path), intro, rows), *nested]


def settings_count(root: type = Settings) -> int:
    """Return how many settings a user can set."""
    return sum(len(s.settings) for s in sections(root))


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _lines(root: type) -> Iterator[str]:
    yield INTRO
    for section in sections(root):
        yield f"## `[{section.name}]`\n"
        if section.intro:
            yield f"{_cell(section.intro)}\n"
        if not section.settings:
            continue
        yield "| Setting | Type / valid values | Default | Meaning |"
        yield "|---|---|---|---|"
        for s in section.settings:
            yield (
                f"| `{s.name}`<br>`{s.env}` | {_cell(s.kind)} | `{_cell(s.default)}` "
                f"| {_cell(s.meaning)} |"
            )
        yield ""


def render(root: type = Settings) -> str:
    """Return docs/configuration.md's text."""
    return "\n".join(_lines(root)).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="the settings reference (docs/configuration.md)")
    parser.add_argument("--write", action="store_true", help=f"rewrite {REFERENCE_PATH.name}")
    parser.add_argument("--count", action="store_true", help="print the number of settings")
    args = parser.parse_args(argv)
    if args.count:
        print(settings_count())
    elif args.write:
        REFERENCE_PATH.parent.mkdir(parents=True, exist_ok=True)
        REFERENCE_PATH.write_text(render(), encoding="utf-8")
    else:
        sys.stdout.write(render())
    return 0


if __name__ == "__main__":
    sys.exit(main())
