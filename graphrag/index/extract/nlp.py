"""LLM-free graph extraction (``index.method = "nlp"``): named spans from the text, edges from
co-occurrence in a chunk weighted by normalized PMI. Rule-based because FastGraphRAG's NLTK or
spaCy models download at first use; a language module that finds names (Chinese) is used
instead where it exists."""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterator

import pandas as pd

from graphrag import schemas as S
from graphrag.index.extract.names import display_name, name_key
from graphrag.index.extract.stage import ENTITY_COLUMNS, RELATIONSHIP_COLUMNS, dropped_row
from graphrag.index.graph.aliases import short_forms, unit_documents
from graphrag.settings import IndexSettings
from graphrag.text import lang
from graphrag.text.lang import sentences

# Words capitalized only by position (shipped in code so nothing is downloaded).
STOP_WORDS = frozenset(
    """
    a about above after again against all also although am an and another any are as at
    be because been before being below between both but by can could did do does doing down
    during each either even ever every few for from further had has have having he her here
    hers herself him himself his how however i if in into is it its itself just last later
    least less let like many may me meanwhile might more most much must my myself neither
    never next no nor not now of off often on once one only or other others otherwise our
    ours out over own perhaps per rather same several she should since so some soon still
    such than that the their theirs them then there therefore these they this those though
    through thus to today together too tomorrow under unless until up upon us very was we
    were what whatever when where whether which while who whom whose why will with within
    without would yes yet you your yours yesterday instead despite among across along around
    beyond near onto toward towards via after first second third finally according
    former new q
    january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday
    mr mrs ms dr prof sir dame
    """.split()
)
# Characters of sentences kept as an entity's description per chunk (twice this once merged).
DESCRIPTION_CHARS = 400
# Lower-case words allowed inside a name ("Bank of England", "Port of Spain").
CONNECTORS = frozenset({"of", "de", "du", "da", "del", "der", "van", "von", "la", "le", "&"})
# A title before a name makes it a person and is not part of the name.
PERSON_TITLES = frozenset(
    """dr mr mrs ms prof professor sir dame director mayor councillor councilor captain capt
    president minister senator judge chief chair chairman chairwoman harbourmaster
    harbormaster engineer""".split()
)
TYPE_OF_HEAD = {
    "organization": """institute university council company cooperative co-operative ltd inc
        corp corporation association society foundation bank agency board committee group
        trust department ministry marine aquaculture guardians club school college
        authority commission party union partners fund museum hospital""".split(),
    "geo": """bay point island isle river harbour harbor port street road shoal coast lake
        mount mountain valley city town county village beach cape sea ocean reef
        bridge""".split(),
    "event": """festival storm election cup conference summit war fair hurricane
        flood case trial strike championship""".split(),
}
HEAD_TYPES = {word: kind for kind, words in TYPE_OF_HEAD.items() for word in words}
# An edge's description when its two names share a chunk but no sentence, per language.
SAME_PASSAGE = {
    "en": "{a} and {b} are mentioned in the same passage.",
    "zh": "{a}与{b}出现在同一段落。",
}

_WORD = re.compile(r"[A-Za-z][\w'’&.-]*[\w]|[A-Za-z]|&")
_ACRONYM = re.compile(r"^[A-Z][A-Z0-9&]{1,9}s?$")
_DEFINITION = re.compile(
    r"([A-Z][\w'’-]*(?:\s+(?:[A-Z][\w'’-]*|of|and|&|for|the))*)\s+\(([A-Z][A-Z0-9&]{1,9})\)"
)


def _is_capitalized(word: str) -> bool:
    return word[:1].isupper() or bool(_ACRONYM.match(word))


def _is_heading(sentence: str) -> bool:
    """Return whether ``sentence`` is a title-case headline (capitals mark a title)."""
    words = [w for w in _WORD.findall(sentence) if len(w) > 3]
    capitalized = sum(w[:1].isupper() for w in words)
    return len(words) >= 3 and capitalized >= 0.7 * len(words) and not sentence.endswith(".")


def _runs(sentence: str) -> Iterator[list[tuple[str, int]]]:
    """Yield the runs of space-separated capitalized words with their positions; a connector
    joins two only after a head word ("University of X")."""
    matches = list(_WORD.finditer(sentence))
    words = [m.group(0).rstrip(".") for m in matches]
    run: list[tuple[str, int]] = []
    for i, word in enumerate(words):
        glued = i > 0 and sentence[matches[i - 1].end() : matches[i].start()].strip() == ""
        after_possessive = i > 0 and re.search(r"['’]s$", words[i - 1]) is not None
        case_change = bool(run) and (
            bool(_ACRONYM.match(word)) != bool(_ACRONYM.match(run[-1][0]))
            and run[-1][0] not in CONNECTORS
        )
        joins = run and glued and not after_possessive and not case_change
        if _is_capitalized(word) and word.casefold() not in STOP_WORDS:
            if not joins:
                if run:
                    yield run
                run = []
            run.append((word, i))
        elif (
            word in CONNECTORS
            and joins
            and run[-1][0].casefold() in HEAD_TYPES
            and i + 1 < len(words)
            and _is_capitalized(words[i + 1])
        ):
            run.append((word, i))
        else:
            if run:
                yield run
            run = []
    if run:
        yield run


def _spans(sentence: str) -> Iterator[tuple[list[str], bool, str | None]]:
    """Yield (words, starts the sentence, title before it) for each capitalized run."""
    if _is_heading(sentence):
        return
    matches = list(_WORD.finditer(sentence))
    words = [m.group(0).rstrip(".") for m in matches]
    for run in _runs(sentence):
        names = [w for w, _ in run]
        start = run[0][1]
        title = None
        while names and names[0].casefold() in PERSON_TITLES:
            title = names.pop(0)
            start += 1
        while names and names[-1] in CONNECTORS:
            names.pop()
        if not names:  # a title alone ("... defers to the President."): no name follows
            continue
        if start > 0 and title is None and words[start - 1].casefold() in PERSON_TITLES:
            title = words[start - 1]
        gap = sentence[: matches[start].start()][-3:] if start > 0 else ""
        opens = start == 0 or any(mark in gap for mark in ':"“—(')  # a quote or answer opens
        names[-1] = re.sub(r"['’]s$", "", names[-1])
        yield names, opens, title


def _candidates(text: str) -> list[tuple[str, str, bool, str | None, str | None]]:
    """Return (surface name, sentence, sentence-initial single word, title, entity type if the
    language module knows it) per mention."""
    language = lang.module(text)
    if hasattr(language, "names"):
        return [
            (name, sentence, False, None, kind)
            for sentence in language.sentences(text)
            for name, kind in language.names(sentence)
            if name.casefold() not in PERSON_TITLES
        ]
    found = []
    for sentence in sentences(text):
        for run, initial, title in _spans(sentence):
            # an acronym's capitals are its own, wherever it stands
            opener = initial and len(run) == 1 and not _ACRONYM.match(run[0])
            found.append((" ".join(run), sentence, opener, title, None))
    return found


def _longer_names(
    per_unit: list[tuple[str, list[tuple[str, str, bool, str | None, str | None]]]],
    aliases: dict[str, str],
) -> dict[str, set[str]]:
    """Return {short form: keys of the longer names it may stand for} (suffixes, first word)."""
    longer: dict[str, set[str]] = defaultdict(set)
    for _, found in per_unit:
        for name, _, initial, _, _ in found:
            words = name.split()
            if len(words) < 2 or initial or _ACRONYM.match(words[0]):
                continue
            key = name_key(name, aliases)
            for cut in range(1, len(words)):
                longer[" ".join(words[cut:]).casefold()].add(key)
            longer[words[0].casefold()].add(key)
    return longer


def acronym_aliases(texts: list[str]) -> dict[str, str]:
    """Return {acronym: long name} from definitions like "Long Name (LN)" whose initials fit."""
    aliases = {}
    for text in texts:
        for long_name, acronym in _DEFINITION.findall(text):
            words = long_name.split()
            capitals = [w for w in words if w[:1].isupper()]
            # the long name is the shortest tail whose capitals spell the acronym
            for cut in range(len(words)):
                tail = words[cut:]
                initials = "".join(w[0] for w in tail if w[:1].isupper())
                if initials == acronym.rstrip("s") and tail[0][:1].isupper():
                    aliases[acronym] = " ".join(tail)
                    break
            else:
                if capitals and capitals[0][0] == acronym[0]:
                    aliases[acronym] = long_name
    return aliases


def _entity_type(title: str, titled: bool) -> str:
    if titled:
        return "person"
    words = title.split()
    if _ACRONYM.match(title):
        return "organization"
    head = HEAD_TYPES.get(words[-1].casefold()) or HEAD_TYPES.get(words[0].casefold())
    return head or "concept"


def trim_text(text: str, limit: int) -> str:
    """Return ``text`` cut at a word boundary to at most ``limit`` characters (… marks a cut)."""
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


def extract_graph_nlp(
    text_units: pd.DataFrame, settings: IndexSettings
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Return (entity mentions, relationship mentions, errors, dropped) with no LLM call: a mention
    per (name, chunk) and per pair of names sharing a chunk, strength 1 (see pmi_weights)."""
    units = list(text_units[[S.ID, S.TEXT]].itertuples(index=False, name=None))
    aliases = {**acronym_aliases([t for _, t in units]), **settings.aliases}
    per_unit = [(uid, _candidates(text)) for uid, text in units]
    capitalized_inside = {
        name.casefold() for _, found in per_unit for name, _, initial, _, _ in found if not initial
    }
    longer_names = _longer_names(per_unit, aliases)
    typed = [(uid, name, kind) for uid, found in per_unit for name, _, _, _, kind in found if kind]
    document_of = unit_documents(text_units)
    short = {
        (d, name_key(s)): name_key(f) for (d, s), (f, _) in short_forms(typed, text_units).items()
    }
    mentions: dict[tuple[str, str], None] = {}  # (name key, chunk) in first-seen order
    sentences_of: dict[tuple[str, str], list[str]] = defaultdict(list)
    surface: dict[str, Counter] = defaultdict(Counter)
    titled: Counter = Counter()
    kinds: dict[str, Counter] = defaultdict(Counter)
    dropped = []
    for uid, found in per_unit:
        for name, sentence, initial, title, kind in found:
            if initial and name.casefold() not in capitalized_inside:
                continue  # capitalized only because it opens the sentence
            if len(name) < 2 or name.casefold() in STOP_WORDS:
                continue
            key = name_key(name, aliases)
            longer = longer_names.get(name.casefold(), set())
            if len(longer) == 1:
                key = next(iter(longer))
            elif len(longer) > 1 and " " not in name:
                why = "ambiguous short name: part of several longer names"
                dropped.append(dropped_row(uid, name, why, ", ".join(sorted(longer))))
                continue
            key = short.get((document_of[uid], key), key)  # a Chinese short form, in its document
            if not key:
                continue
            own = name_key(name) == key  # an alias or a short form does not name the entity
            if own:
                surface[key][display_name(name)] += 1
            titled[key] += title is not None
            if kind and own:
                kinds[key][kind] += 1
            mentions.setdefault((key, uid), None)
            if sentence not in sentences_of[(key, uid)]:
                sentences_of[(key, uid)].append(sentence)
    limit = DESCRIPTION_CHARS
    entity_rows = []
    for key, uid in mentions:
        forms = surface.get(key) or Counter({key: 1})
        title = forms.most_common(1)[0][0]
        description = trim_text(" ".join(sentences_of[(key, uid)]), limit)
        kind = kinds[key].most_common(1)[0][0] if kinds[key] else None
        row = (title, key, kind or _entity_type(title, titled[key] > 0), description, uid)
        entity_rows.append(dict(zip(ENTITY_COLUMNS, row, strict=True)))
    entities = pd.DataFrame(entity_rows, columns=ENTITY_COLUMNS)
    relationship_rows = []
    language_of = {uid: lang.detect(text) for uid, text in units}
    title_of = dict(zip(entities[S.NAME_KEY], entities[S.TITLE], strict=False))
    for uid, group in entities.groupby(S.TEXT_UNIT_ID, sort=False):
        keys = sorted(group[S.NAME_KEY])
        for i, a in enumerate(keys):
            for b in keys[i + 1 :]:
                shared = [s for s in sentences_of[(a, uid)] if s in sentences_of[(b, uid)]]
                description = (
                    trim_text(" ".join(shared), limit)
                    if shared
                    else SAME_PASSAGE.get(language_of[uid], SAME_PASSAGE["en"]).format(
                        a=title_of[a], b=title_of[b]
                    )
                )
                row = (title_of[a], title_of[b], a, b, description, 1, uid, bool(shared))
                relationship_rows.append(row)
    columns = [*RELATIONSHIP_COLUMNS, "same_sentence"]
    relationships = pd.DataFrame(relationship_rows, columns=columns)
    return (
        entities,
        relationships,
        pd.DataFrame(columns=S.ERROR_COLUMNS),
        pd.DataFrame(dropped, columns=S.DROPPED_COLUMNS),
    )


def keep_frequent(
    entity_mentions: pd.DataFrame, relationship_mentions: pd.DataFrame, min_chunks: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return the mentions of names in ``min_chunks`` chunks or sharing a sentence with another
    name, and the relationship mentions between the names kept."""
    chunks = entity_mentions.groupby(S.NAME_KEY)[S.TEXT_UNIT_ID].nunique()
    in_sentence = set(
        relationship_mentions.loc[relationship_mentions["same_sentence"], "source_key"]
    ) | set(relationship_mentions.loc[relationship_mentions["same_sentence"], "target_key"])
    kept = {k for k, n in chunks.items() if n >= min_chunks or k in in_sentence}
    entity_mentions = entity_mentions[entity_mentions[S.NAME_KEY].isin(kept)]
    relationship_mentions = relationship_mentions[
        relationship_mentions["source_key"].isin(kept)
        & relationship_mentions["target_key"].isin(kept)
    ]
    return entity_mentions.reset_index(drop=True), relationship_mentions.reset_index(drop=True)


# An edge stays if either of its ends ranks it this high by NPMI (docs/defaults-provenance.md)
TOP_EDGES_PER_ENTITY = 8


def pmi_weights(
    relationship_mentions: pd.DataFrame,
    entity_mentions: pd.DataFrame,
    n_chunks: int,
    top_per_entity: int = TOP_EDGES_PER_ENTITY,
) -> pd.DataFrame:
    """Return the pairs worth an edge, strength set so the merged weight is NPMI times
    co-occurrences (plus one per shared sentence); NPMI <= 0 goes, each entity keeps
    ``top_per_entity`` edges."""
    if relationship_mentions.empty:
        return relationship_mentions
    chunk_count = entity_mentions.groupby(S.NAME_KEY)[S.TEXT_UNIT_ID].nunique()
    pairs = relationship_mentions.groupby(["source_key", "target_key"])
    together = pairs[S.TEXT_UNIT_ID].nunique()
    sentence_bonus = pairs["same_sentence"].sum()
    weight = {}
    for (a, b), n_ab in together.items():
        p_ab = n_ab / n_chunks
        pmi = math.log(p_ab / ((chunk_count[a] / n_chunks) * (chunk_count[b] / n_chunks)))
        npmi = 1.0 if p_ab >= 1 else pmi / -math.log(p_ab)
        if npmi > 0 or sentence_bonus[(a, b)]:
            weight[(a, b)] = max(npmi, 0.05) * n_ab + sentence_bonus[(a, b)]
    best: dict[str, list[tuple[float, tuple[str, str]]]] = defaultdict(list)
    for pair, w in weight.items():
        for end in pair:
            best[end].append((w, pair))
    kept = {
        pair
        for ranked in best.values()
        for _, pair in sorted(ranked, key=lambda x: (-x[0], x[1]))[:top_per_entity]
    }
    pairs_of = zip(
        relationship_mentions["source_key"], relationship_mentions["target_key"], strict=True
    )
    frame = relationship_mentions[[p in kept for p in pairs_of]].copy()
    per_mention = {p: weight[p] / together[p] for p in kept}
    frame["strength"] = [
        per_mention[p] for p in zip(frame["source_key"], frame["target_key"], strict=True)
    ]
    return frame.drop(columns=["same_sentence"]).reset_index(drop=True)
