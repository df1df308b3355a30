"""The settings tree, assembled from the section modules beside this one, loaded and checked.

Precedence, lowest first: the defaults, the project's ``graphrag.toml`` (in the project root:
``--root``, ``GRAPHRAG_ROOT`` or the working directory), a second TOML file layered over it
(``--config``, ``GRAPHRAG_CONFIG`` or the path given: a variant names only what it changes),
then ``GRAPHRAG_<SECTION>__<KEY>`` environment variables (one more ``__`` per table:
``GRAPHRAG_QUERY__LOCAL__TOP_ENTITIES``); ``GRAPHRAG_CACHE`` sets ``cache.mode``. Relative
paths are taken from the project root, and each value remembers where it came from
(:attr:`Settings.sources`, printed by ``graphrag settings``).
"""

from __future__ import annotations

import dataclasses
import json
import os
import tomllib
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from graphrag.settings.eval import EvalSettings
from graphrag.settings.folders import ProjectSettings, PromptSettings
from graphrag.settings.index import ChunkingSettings, IndexSettings
from graphrag.settings.models import (
    CacheSettings,
    EmbeddedServerSettings,
    EmbeddingSettings,
    JudgeSettings,
    LLMSettings,
)
from graphrag.settings.query import METHOD_SETTINGS, QuerySettings

REPO_ROOT = Path(__file__).resolve().parents[2]
PROJECT_FILE = "graphrag.toml"
# Settings fields that are not settings: where the project is and where each value came from.
NOT_SETTINGS = frozenset({"root", "sources"})


def repo_relative(path: str | Path) -> str:
    """Return ``path`` relative to the repository when it lies inside it, else as given (so
    committed reports do not record one machine's layout)."""
    try:
        return Path(path).resolve().relative_to(REPO_ROOT.resolve()).as_posix()
    except ValueError:
        return str(path)


class SettingsError(ValueError):
    """A setting is unknown, malformed or out of range; the message names it."""


@dataclass
class Settings:
    project: ProjectSettings = field(default_factory=ProjectSettings)
    llm: LLMSettings = field(default_factory=LLMSettings)
    embedded: EmbeddedServerSettings = field(default_factory=EmbeddedServerSettings)
    judge: JudgeSettings = field(default_factory=JudgeSettings)
    cache: CacheSettings = field(default_factory=CacheSettings)
    embeddings: EmbeddingSettings = field(default_factory=EmbeddingSettings)
    chunking: ChunkingSettings = field(default_factory=ChunkingSettings)
    index: IndexSettings = field(default_factory=IndexSettings)
    query: QuerySettings = field(default_factory=QuerySettings)
    eval: EvalSettings = field(default_factory=EvalSettings)
    prompts: PromptSettings = field(default_factory=PromptSettings)
    # not settings (NOT_SETTINGS): fields, so that dataclasses.replace keeps them
    root: Path = field(default_factory=Path.cwd, repr=False, compare=False)
    sources: dict[str, str] = field(default_factory=dict, repr=False, compare=False)

    def resolve_path(self, value: str | Path) -> Path:
        """Return ``value`` as a path; relative paths are taken from the project root."""
        path = Path(value).expanduser()
        return path if path.is_absolute() else self.root / path

    def to_dict(self) -> dict[str, Any]:
        """Return the tree as nested dicts, each method's settings as ``query.<method>``."""
        tree = dataclasses.asdict(self)
        for name in NOT_SETTINGS:
            tree.pop(name)
        tree["query"].update(tree["query"].pop("methods"))
        return tree

    def source(self, name: str) -> str:
        """Where the setting ``name`` (dotted, e.g. ``llm.model``) got its value."""
        return self.sources.get(name, "default")


def _coerce(value: Any, annotation: Any, name: str) -> Any:
    """Return ``value`` converted to the annotated type, or raise naming the setting."""
    origin = typing.get_origin(annotation)
    if origin is Literal:
        choices = typing.get_args(annotation)
        if value not in choices:
            raise SettingsError(
                f"setting {name}={value!r}: expected one of {', '.join(map(str, choices))}"
            )
        return value
    if origin in (list, dict):
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError as err:
                raise SettingsError(
                    f"setting {name}: expected JSON for a {origin.__name__}"
                ) from err
        if not isinstance(value, origin):
            raise SettingsError(f"setting {name}: expected a {origin.__name__}, got {value!r}")
        return value
    try:
        if annotation is bool and isinstance(value, str):
            if value.lower() not in ("1", "0", "true", "false", "yes", "no", "on", "off"):
                raise ValueError(value)
            return value.lower() in ("1", "true", "yes", "on")
        if annotation in (int, float) and isinstance(value, bool):
            raise ValueError(value)
        if annotation is int and isinstance(value, float) and not value.is_integer():
            raise ValueError(value)  # int() would silently drop the fraction
        return annotation(value)
    except (TypeError, ValueError) as err:
        raise SettingsError(
            f"setting {name}={value!r}: expected {getattr(annotation, '__name__', annotation)}"
        ) from err


def _apply(
    section: Any,
    values: dict[str, Any],
    prefix: str,
    sources: dict[str, str],
    dotted: str = "",
    origin: str = "",
) -> None:
    """Set ``values`` on ``section``; ``prefix`` names their origin in errors, and each value
    set is noted in ``sources`` under its dotted name as coming from the origin."""
    hints = typing.get_type_hints(type(section))
    known = {f.name for f in dataclasses.fields(section)} - NOT_SETTINGS
    origin = origin or prefix
    # [query.<method>] tables: each method's own settings (settings/query.py)
    tables = section.methods if isinstance(section, QuerySettings) else {}
    known -= {"methods"} if isinstance(section, QuerySettings) else set()
    for key, value in values.items():
        name = f"{prefix}.{key}"
        here = f"{dotted}{key}"
        if key in tables:
            if not isinstance(value, dict):
                raise SettingsError(f"setting {name} is a table of method {key}'s settings")
            _apply(tables[key], value, name, sources, f"{here}.", origin)
            continue
        if key not in known:
            if isinstance(section, QuerySettings) and key in METHOD_SETTINGS:
                raise SettingsError(f"method {key} has no settings of its own ({name})")
            names = sorted(known | set(tables))
            raise SettingsError(f"unknown setting {name} (known: {', '.join(names)})")
        current = getattr(section, key)
        if dataclasses.is_dataclass(current):
            if not isinstance(value, dict):
                raise SettingsError(f"setting {name} is a section; expected a table")
            _apply(current, value, name, sources, f"{here}.", origin)
        else:
            setattr(section, key, _coerce(value, hints[key], name))
            sources[here] = origin


def _env_tree(env: typing.Mapping[str, str]) -> dict[str, Any]:
    """Return ``GRAPHRAG_A__B__C=v`` variables as ``{"a": {"b": {"c": "v"}}}``."""
    tree: dict[str, Any] = {}
    for key, value in env.items():
        if key.startswith("GRAPHRAG_") and "__" in key:
            *path, name = key[len("GRAPHRAG_") :].lower().split("__")
            node = tree
            for part in path:
                node = node.setdefault(part, {})
                if not isinstance(node, dict):
                    raise SettingsError(f"environment variable {key}: {part} is not a table")
            node[name] = value
    return tree


def _read_toml(file: Path) -> dict[str, Any]:
    if not file.is_file():
        raise SettingsError(f"settings file {file} does not exist")
    try:
        return tomllib.loads(file.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as err:
        raise SettingsError(f"settings file {file}: {err}") from err


def load_settings(
    path: str | os.PathLike[str] | None = None,
    env: typing.Mapping[str, str] | None = None,
    overrides: dict[str, Any] | None = None,
    root: str | os.PathLike[str] | None = None,
) -> Settings:
    """Return the settings of the project at ``root`` (default ``$GRAPHRAG_ROOT`` or the
    working directory): defaults, its ``graphrag.toml``, the TOML file ``path`` layered over
    it, the environment and ``overrides``."""
    env = os.environ if env is None else env
    root = Path(root or env.get("GRAPHRAG_ROOT") or Path.cwd()).expanduser().resolve()
    if not root.is_dir():
        raise SettingsError(f"project root {root} (--root / GRAPHRAG_ROOT) is not a folder")
    settings = Settings(root=root)
    project_file = root / PROJECT_FILE
    if project_file.is_file():
        _apply(settings, _read_toml(project_file), str(project_file), settings.sources)
    if path is None and env.get("GRAPHRAG_CONFIG"):
        path = env["GRAPHRAG_CONFIG"]
    if path is not None and Path(path).resolve() != project_file:
        file = Path(path)
        _apply(settings, _read_toml(file), str(file), settings.sources)
    env_values = _env_tree(env)
    if "GRAPHRAG_CACHE" in env:
        env_values.setdefault("cache", {})["mode"] = env["GRAPHRAG_CACHE"]
    _apply(settings, env_values, "env:GRAPHRAG", settings.sources, origin="environment")
    if overrides:
        _apply(settings, overrides, "override", settings.sources)
    _validate(settings)
    return settings


def _validate(settings: Settings) -> None:
    if settings.chunking.overlap >= settings.chunking.size:
        raise SettingsError("setting chunking.overlap must be smaller than chunking.size")
    if settings.llm.concurrency < 1:
        raise SettingsError("setting llm.concurrency must be at least 1")
    if settings.embedded.parallel < 1:
        raise SettingsError("setting embedded.parallel must be at least 1")
    embeddings = settings.embeddings
    if embeddings.dimensions < 0 or (embeddings.dimensions and not embeddings.base_url):
        raise SettingsError(
            f"setting embeddings.dimensions = {embeddings.dimensions} is asked of an embeddings "
            "endpoint only: set embeddings.base_url, or leave dimensions at 0 (the model's own)"
        )
    judge = settings.judge
    if judge.model_file and judge.base_url:
        raise SettingsError(
            "setting judge.model_file serves the judge on a second embedded server, and "
            f"judge.base_url = {judge.base_url!r} names an endpoint: set one of them"
        )
    q = settings.query
    if q.chunk_context == "budget" and q.top_k != QuerySettings.top_k:
        raise SettingsError(
            f"setting query.top_k={q.top_k} does nothing under query.chunk_context = "
            '"budget" (the chunks that fit the budget are shown); set chunk_context = "top_k" '
            "or leave top_k out"
        )
    for name, section in q.methods.items():
        check = getattr(section, "validate", None)
        if check is not None:
            check(f"query.{name}", sorted(METHOD_SETTINGS))
