"""Entity names as the index compares them: tidied for display, keyed for merging, and found
in a text. Extraction, its record parser, alias merging and the NLP mode all read names
this one way."""

from __future__ import annotations

import re
import unicodedata

_EDGE_PUNCT = re.compile(r"^[\W_]+|[\W_]+$")
_SPACE = re.compile(r"\s+")
_POSSESSIVE = re.compile(r"['’]s$")
# Leading titles dropped from the merge key, so "Director Mara Okafor" merges with "Mara Okafor".
_HONORIFIC = re.compile(
    r"^(?:dr|mr|mrs|ms|prof|professor|sir|dame|director|mayor|"
    r"councillor|councilor|captain|capt)\.? (?=\S+ \S)"
)


def display_name(raw: str) -> str:
    """Return a name tidied for display: NFKC, single spaces, no quotes or edge punctuation."""
    text = _SPACE.sub(" ", unicodedata.normalize("NFKC", raw)).strip()
    return _EDGE_PUNCT.sub("", text.strip("\"'`")).strip()


def name_key(raw: str, aliases: dict[str, str] | None = None) -> str:
    """Return the key entities are merged on: case-folded, punctuation-light, alias-resolved."""
    key = _POSSESSIVE.sub("", display_name(raw)).casefold()
    key = re.sub(r"^the ", "", key)
    key = _HONORIFIC.sub("", key)
    key = re.sub(r"[^\w\s&-]", "", key)
    key = _SPACE.sub(" ", key).strip()
    if aliases:
        key = {name_key(a): name_key(c) for a, c in aliases.items()}.get(key, key)
    return key


def mentioned(name: str, text: str) -> bool:
    """Return whether ``text`` mentions ``name``: the name itself, or each of its words of three
    or more letters (so "Director Mara Okafor" is found in "... Director Okafor ... Mara ...")."""
    folded = text.casefold()
    name = display_name(name).casefold()
    if name and name in folded:
        return True
    words = [w for w in re.findall(r"\w+", name) if len(w) >= 3]
    return bool(words) and all(re.search(rf"\b{re.escape(w)}", folded) for w in words)
