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


# Finite verbs a name never holds in lower case: auxiliaries, copulas, modals, and the verbs
# news sentences are made of. A title of a work capitalizes its verbs ("Gone with the Wind").
FINITE_VERBS = frozenset(
    "is are was were am be been has have had do does did will would shall should can could "
    "may might must remain remains remained say says said die dies died become becomes became "
    "make makes made take takes took win wins won lose loses lost lead leads led show shows "
    "showed report reports reported announce announces announced claim claims claimed "
    "continue continues continued rise rises rose fall falls fell".split()
)
CLAUSE_MIN_WORDS = 4  # "Smith was" is a fragment, not a sentence; four words make a clause
# A passive participle and its agent or role: "Renamed by an act of ...", "Long known as ...",
# and a lower-case one with "to": "ceded to the United Kingdom" ("Dedicated To ..." is a title).
_PARTICIPLE = re.compile(r"\b[A-Za-z]+(?:ed|wn|en) (?:by|as)\b|\b[a-z]+ed to\b")


def is_clause(name: str) -> bool:
    """Return whether ``name`` is a clause, not a name: CLAUSE_MIN_WORDS words or more, one a
    lower-case finite verb ("20 people have died") or a passive participle ("Renamed by an act")."""
    text = display_name(name)
    words = text.split()
    return len(words) >= CLAUSE_MIN_WORDS and (
        any(w in FINITE_VERBS for w in words) or bool(_PARTICIPLE.search(text))
    )
