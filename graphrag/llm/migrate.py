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
  have, the reply was recorded without the rule and keeps only the rule-free key.
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


def stop_specs(record: dict[str, Any], families: Iterable[StreamedFamily]) -> tuple[list, str]:
    """Return the stop specs (None: no rule) ``record`` is keyed under, and why."""
    body = record["request"]
    family = next((f for f in families if f.applies(body)), None)
    if family is None:
        return [None], "not streamed"
    if record.get("stopped_early"):
        return [family.rule.spec], f"{family.rule.name}: stopped early by the rule"
    text = reply_text(record)
    if text is None:
        return [family.rule.spec, None], f"{family.rule.name}: refusal (before any reply)"
    if family.rule(body).check(text) is None:
        return [family.rule.spec, None], f"{family.rule.name}: the rule would not cut the reply"
    return [None], f"{family.rule.name}: the rule would cut the reply (recorded without it)"


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
        specs, reason = stop_specs(record, families)
        identity = identity_of(record)
        for spec in specs:
            keyed = {"identity": identity, "stop": spec, "migrated_from": old}
            cache.put(request_key(record["request"], identity, spec), record | keyed)
            done.written += 1
        done.records += 1
        done.reasons[reason] += 1
        path.unlink()
    write_format(root)
    if done.records:
        _log(root, found or CACHE_FORMAT, done)
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
