"""Prompt templates loaded by name: the user's prompt folder first, else the packaged one.

A template file, ``templates/<name>.txt``: ``#`` comment lines (dropped), then sections, each
opened by a line ``=== <section>``; a section's text, without its trailing line breaks, is
byte for byte what the model is sent. Placeholders are ``string.Template``'s ``$name`` (``$$``
for a dollar sign). An override (``prompts.dir``) must keep the packaged sections and their
placeholders, else it would silently drop what one carries: that is an error naming the file.
"""

from __future__ import annotations

import functools
import re
import shutil
import string
from dataclasses import dataclass
from pathlib import Path

PACKAGED_DIR = Path(__file__).resolve().parent / "templates"
SUFFIX = ".txt"
_SECTION = re.compile(r"=== (\w+)")

# The user's prompt folder, set by the Workbench through use_prompt_dir (None: packaged only).
_user_dir: Path | None = None


class PromptTemplateError(ValueError):
    """A prompt template file is malformed or does not fit its prompt; the message names it."""


@dataclass(frozen=True)
class PromptTemplate:
    """One prompt's parts, by section name, and the file they were read from."""

    name: str
    path: Path
    sections: dict[str, string.Template]

    def text(self, section: str) -> str:
        """Return a section with no placeholders, as written."""
        return self.render(section)

    def render(self, section: str, **values: object) -> str:
        """Return ``section`` with its ``$placeholders`` filled from ``values``."""
        try:
            return self.sections[section].substitute({k: str(v) for k, v in values.items()})
        except KeyError as err:
            raise PromptTemplateError(
                f"{self.path}: section '{section}' needs a value for {err}, which the "
                f"{self.name} prompt does not give"
            ) from err
        except ValueError as err:
            raise PromptTemplateError(
                f"{self.path}: section '{section}': {err} (write $$ for a dollar sign)"
            ) from err

    def placeholders(self, section: str) -> set[str]:
        return set(self.sections[section].get_identifiers())


@functools.cache
def _packaged_names() -> tuple[str, ...]:
    # the package's own folder does not change while it runs (as packaged_template assumes)
    return tuple(sorted(path.stem for path in PACKAGED_DIR.glob(f"*{SUFFIX}")))


def template_names() -> list[str]:
    """Return the name of every packaged prompt, sorted (read once: the answer prompt looks
    up its language's form on every answer)."""
    return list(_packaged_names())


def parse_template(name: str, path: Path) -> PromptTemplate:
    """Return the template in ``path``, split into its sections."""
    lines = path.read_text(encoding="utf-8").split("\n")
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for number, line in enumerate(lines, start=1):
        marker = _SECTION.fullmatch(line)
        if marker:
            if marker[1] in sections:
                raise PromptTemplateError(f"{path}:{number}: section '{marker[1]}' appears twice")
            current = sections[marker[1]] = []
        elif current is not None:
            current.append(line)
        elif line.strip() and not line.startswith("#"):
            raise PromptTemplateError(
                f"{path}:{number}: text before the first '=== <section>' line; only '#' "
                "comment lines may come first"
            )
    if not sections:
        raise PromptTemplateError(f"{path}: no '=== <section>' line, so no prompt text")
    templates = {
        key: string.Template("\n".join(body).rstrip("\n")) for key, body in sections.items()
    }
    for key, template in templates.items():
        if not template.is_valid():
            raise PromptTemplateError(
                f"{path}: section '{key}' has a '$' that starts no placeholder (write $$ for "
                "a dollar sign)"
            )
    return PromptTemplate(name, path, templates)


@functools.cache
def packaged_template(name: str) -> PromptTemplate:
    """Return the prompt ``name`` as the package ships it, whatever the user's folder holds."""
    path = PACKAGED_DIR / f"{name}{SUFFIX}"
    if not path.is_file():
        raise PromptTemplateError(
            f"no prompt named '{name}' (prompts: {', '.join(template_names())})"
        )
    return parse_template(name, path)


def load_template(name: str) -> PromptTemplate:
    """Return the prompt ``name``: the user's checked copy if their folder holds one."""
    packaged = packaged_template(name)
    if _user_dir is None:
        return packaged
    path = _user_dir / f"{name}{SUFFIX}"
    if not path.is_file():
        return packaged
    override = parse_template(name, path)
    _check_fits(override, packaged)
    return override


def _check_fits(override: PromptTemplate, packaged: PromptTemplate) -> None:
    """Raise unless ``override`` has the packaged sections, each with the same placeholders."""
    missing = packaged.sections.keys() - override.sections.keys()
    extra = override.sections.keys() - packaged.sections.keys()
    if missing or extra:
        raise PromptTemplateError(
            f"{override.path}: sections {sorted(override.sections)} differ from the "
            f"{packaged.name} prompt's {sorted(packaged.sections)} (missing: "
            f"{sorted(missing) or 'none'}; unknown: {sorted(extra) or 'none'})"
        )
    for section in packaged.sections:
        want, have = packaged.placeholders(section), override.placeholders(section)
        problems = []
        if want - have:
            problems.append(
                f"lacks placeholder(s) {_dollars(want - have)} (without them the prompt leaves "
                "out what they carry)"
            )
        if have - want:
            problems.append(
                f"uses unknown placeholder(s) {_dollars(have - want)} (write $$ for a dollar sign)"
            )
        if problems:
            raise PromptTemplateError(
                f"{override.path}: section '{section}' {'; it '.join(problems)}. The "
                f"{packaged.name} prompt gives {_dollars(want) or 'no placeholder'} there."
            )


def _dollars(names: set[str]) -> str:
    return ", ".join(f"${n}" for n in sorted(names))


def use_prompt_dir(path: str | Path | None) -> None:
    """Read prompts from the folder ``path`` first from now on (``None``: packaged only). Every
    ``.txt`` file is checked now, before any model call; one named after no prompt (misspelt)
    is an error."""
    global _user_dir
    if path is None or str(path) == "":
        _user_dir = None
        return
    folder = Path(path)
    if not folder.is_dir():
        raise PromptTemplateError(f"prompt folder {folder} (setting prompts.dir) is not a folder")
    names = set(template_names())
    for file in sorted(folder.glob(f"*{SUFFIX}")):
        if file.stem not in names:
            raise PromptTemplateError(
                f"{file}: no prompt is named '{file.stem}' (prompts: {', '.join(sorted(names))})"
            )
        _check_fits(parse_template(file.stem, file), packaged_template(file.stem))
    _user_dir = folder


def prompt_dir() -> Path | None:
    """Return the user's prompt folder in use, or None."""
    return _user_dir


def export_templates(dest: str | Path, overwrite: bool = False) -> list[Path]:
    """Copy every packaged template into the folder ``dest`` (made if missing) and return the
    files written. An existing file is an error unless ``overwrite`` (a user's edits)."""
    folder = Path(dest)
    folder.mkdir(parents=True, exist_ok=True)
    targets = [(PACKAGED_DIR / f"{n}{SUFFIX}", folder / f"{n}{SUFFIX}") for n in template_names()]
    existing = [target for _, target in targets if target.exists()]
    if existing and not overwrite:
        raise FileExistsError(
            f"{existing[0]} exists ({len(existing)} of the {len(targets)} prompts do): pass "
            "overwrite=True to replace them with the packaged prompts"
        )
    for source, target in targets:
        shutil.copyfile(source, target)
    return [target for _, target in targets]


Messages = list[dict[str, str]]  # what every prompt builder returns


def system_and_user(system: str, user: str) -> Messages:
    """Return the two-turn conversation most prompts are: a system turn, then a user turn."""
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def chat(template: str, system: dict[str, object] | None = None, /, **user: object) -> Messages:
    """The prompt ``template`` as a system turn, then a user turn, each section filled."""
    prompt = load_template(template)
    return system_and_user(prompt.render("system", **(system or {})), prompt.render("user", **user))
