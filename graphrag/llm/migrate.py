"""Re-key a recorded LLM cache from an older key scheme to today's (graphrag/llm/cache.py),
never re-recording a reply: ``python -m graphrag cache migrate``.

Format 1 keyed a reply by its request body alone. Format 2 adds who answered and the stop rule
of a streamed request, neither of which a format-1 record states, so they are inferred:

- who answered: a record made on this machine's kind of host ("<CPU>, <n> cores", or no
  host, from before hosts were recorded) was answered by the embedded model, and by its
  default weights (the only weights a cache of the workbench was recorded with: other GGUF
  files were measured with the cache off); a record from ``endpoint <host>`` is keyed by that
  host and the model name it was sent;
- the stop rule: a request of a family that is streamed under a rule (``rules``: extraction
  records, community reports) was stopped by it when ``stopped_early`` says so; else the
  rule is run over the recorded reply: if it would not have cut it, the reply is what the
  request gets with the rule and without it, and it is stored under both keys; if it would
  have, the reply was recorded without the rule (or under an older version of it): it keeps
  the rule-free key, and the rule's key gets the reply ended where the rule ends it (what the
  same tokens streamed under the rule give), marked ``derived_by_migration``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphrag.llm.cache import (
    CACHE_FORMAT,
    ResponseCache,
    folder_format,
    legacy_request_key,
    request_key,
    write_format,
)
from graphrag.llm.identity import embedded_identity
from graphrag.llm.stream import StopRuleFactory
from graphrag.llm.transport import ENDPOINT_PREFIX
from graphrag.text import tokens

MIGRATIONS_FILE = "migrations.json"  # in the cache folder: what each migration did


@dataclass(frozen=True)
class StreamedFamily:
    """Requests the workbench sends streamed under ``rule`` (``applies`` tells them)."""

    rule: StopRuleFactory
    applies: Callable[[dict[str, Any]], bool]


@dataclass
class Migration:
    """What a migration did: records read, keys written, and why each key was chosen."""

    records: int = 0
    written: int = 0
    reasons: Counter = field(default_factory=Counter)

    def lines(self) -> list[str]:
        out = [f"records re-keyed: {self.records}; keys written: {self.written}"]
        out += [f"  {reason}: {n}" for reason, n in sorted(self.reasons.items())]
        return out


def recorded_identity(record: dict[str, Any]) -> dict[str, Any]:
    """Return who answered a format-1 record (see the module's docstring)."""
    host = str(record.get("host") or "")
    if host.startswith(ENDPOINT_PREFIX):
        return {"endpoint": host.removeprefix(ENDPOINT_PREFIX), "model": record["request"]["model"]}
    return embedded_identity("")


def reply_text(record: dict[str, Any]) -> str | None:
    """Return the recorded reply's text, None for a refusal."""
    try:
        return record["response"]["choices"][0]["message"].get("content") or ""
    except (KeyError, IndexError, TypeError):
        return None


def keyed_variants(
    record: dict[str, Any], families: Iterable[StreamedFamily]
) -> tuple[list[tuple[dict[str, Any] | None, dict[str, Any]]], str]:
    """Return (stop spec or None, the record stored under it) for each key ``record`` is
    stored under, and why."""
    body = record["request"]
    family = next((f for f in families if f.applies(body)), None)
    if family is None:
        return [(None, record)], "not streamed"
    rule = family.rule
    if record.get("stopped_early"):
        return [(rule.spec, record)], f"{rule.name}: stopped early by the rule"
    text = reply_text(record)
    if text is None:
        return [(rule.spec, record), (None, record)], f"{rule.name}: refusal (before any reply)"
    cut = rule(body).check(text)
    if cut is None:
        both = [(rule.spec, record), (None, record)]
        return both, f"{rule.name}: the rule would not cut the reply"
    why = f"{rule.name}: the rule would cut the reply (recorded without it; cut copy derived)"
    return [(None, record), (rule.spec, cut_copy(record, rule, body, cut))], why


def cut_copy(
    record: dict[str, Any], rule: StopRuleFactory, body: dict[str, Any], cut: tuple[int, str]
) -> dict[str, Any]:
    """Return what the same request streamed under ``rule`` gets: the recorded reply ended where
    the rule ends it (the model writes the same tokens either way; the stream is closed there),
    its completion tokens counted as the kept text's, marked ``derived_by_migration``."""
    offset, why = cut
    kept = reply_text(record)[:offset]
    close = getattr(rule(body), "close", None)
    kept = close(kept) if close else kept
    response = json.loads(json.dumps(record["response"]))
    response["choices"][0]["message"]["content"] = kept
    response["choices"][0]["finish_reason"] = "stop"
    usage = response.get("usage") or {}
    prompt = int(usage.get("prompt_tokens", 0))
    completion = tokens.count_tokens(kept)
    response["usage"] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    return record | {"response": response, "stopped_early": why, "derived_by_migration": True}


def migrate_folder(
    root: Path,
    families: Iterable[StreamedFamily],
    identity_of: Callable[[dict[str, Any]], dict[str, Any]] = recorded_identity,
) -> Migration:
    """Re-key every format-1 record under ``root`` into format 2 (each written whole before
    its old file is removed, so an interrupted migration is resumed by running it again)."""
    root = Path(root)
    found = folder_format(root)
    if found not in (1, CACHE_FORMAT, None):
        raise ValueError(f"{root}: cache format {found} is newer than this workbench knows")
    families = list(families)
    cache = ResponseCache(root, "on", migrating=True)
    done = Migration()
    for path in sorted(root.glob("??/*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        old = legacy_request_key(record["request"])
        if path.stem != old:
            continue  # already format 2 (a resumed migration)
        variants, reason = keyed_variants(record, families)
        identity = identity_of(record)
        for spec, stored in variants:
            keyed = {"identity": identity, "stop": spec, "migrated_from": old}
            cache.put(request_key(record["request"], identity, spec), stored | keyed)
            done.written += 1
        done.records += 1
        done.reasons[reason] += 1
        path.unlink()
    write_format(root)
    if done.records:
        _log(root, 1, done)  # only format-1 records are re-keyed
    return done


def _log(root: Path, source: int, done: Migration) -> None:
    """Append what the migration did to the folder's ``migrations.json`` (its own record)."""
    log = root / MIGRATIONS_FILE
    entries = json.loads(log.read_text(encoding="utf-8")) if log.is_file() else []
    entries.append(
        {
            "from_format": source,
            "to_format": CACHE_FORMAT,
            "records": done.records,
            "keys_written": done.written,
            "why": dict(sorted(done.reasons.items())),
        }
    )
    log.write_text(json.dumps(entries, indent=1) + "\n", encoding="utf-8")
