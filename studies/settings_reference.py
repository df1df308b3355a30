"""The settings reference, docs/configuration.md, generated from the settings dataclasses.

A setting's meaning is the attribute docstring under its field, read from the source with
:mod:`ast` (Python drops it); a setting without one is an error.

    python -m studies.settings_reference --write    # rewrite docs/configuration.md
    python -m studies.settings_reference            # print the reference
    python -m studies.settings_reference --count    # print the number of settings
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator

from graphrag.settings.load import REPO_ROOT, Settings
from graphrag.settings.reference import MissingDocError, sections, settings_count

__all__ = ["MissingDocError", "render", "sections", "settings_count"]

REFERENCE_PATH = REPO_ROOT / "docs" / "configuration.md"
COMMAND = "python -m studies.settings_reference --write"

INTRO = f"""\
# Configuration reference

Generated from the settings dataclasses in `graphrag/settings/` by
`{COMMAND}`; do not edit it by hand (a test fails when it differs
from the code).

Settings are read, lowest precedence first, from the defaults below, the project's
`graphrag.toml` (in the project root: `--root DIR`, `GRAPHRAG_ROOT` or the working
directory; `graphrag init DIR` writes one listing every setting), a second TOML file layered
over it (`--config FILE` or `GRAPHRAG_CONFIG`: a variant names only what it changes), then
environment variables named as in the first column (a list or a table is given there as
JSON). `GRAPHRAG_CACHE=on|off|replay` is a shortcut for `cache.mode`. Relative paths are
taken from the project root. `graphrag settings` prints every effective value and where it
came from. With no settings at all, the embedded model answers, so a fresh checkout works
offline. Servers of your own for the answering model, the judge and the embeddings:
[own-model.md](own-model.md).
"""


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
