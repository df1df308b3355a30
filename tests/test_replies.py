"""A whole reply with a JSON slip is mended locally (json_repair) before the model is asked to
repair it; a reply cut off at max_tokens is asked again instead; and no repair the committed
cache recorded would now be skipped, so its replay asks the same requests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import FakeLLM, Reply

from graphrag.llm.replies import JSONSyntaxError, mend_json_output, parse_json_output

CACHE = Path(__file__).resolve().parents[1] / "data" / "llm_cache"
SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "integer"}, "why": {"type": "string"}},
    "required": ["answer"],
    "additionalProperties": False,
}
REPAIR = "That reply is invalid: "


def user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


@pytest.mark.parametrize(
    "text",
    [
        '{"answer": 42,}',  # trailing comma
        "{'answer': 42}",  # single quotes
        '{"answer": 42, "why": "six times seven"',  # unclosed object
        'Here it is: {"answer": 42}',  # prose before the value
    ],
)
def test_slips_are_mended_and_still_checked_against_the_schema(text: str) -> None:
    with pytest.raises(JSONSyntaxError):
        parse_json_output(text, SCHEMA)
    assert mend_json_output(text, SCHEMA)["answer"] == 42


def test_what_mending_cannot_make_valid_is_refused() -> None:
    for text in ("Sure! The answer is forty-two.", '{"answer": "forty-two",}', ""):
        with pytest.raises(ValueError):
            mend_json_output(text, SCHEMA)


def test_a_whole_reply_with_a_slip_asks_nothing_more(fake_llm: FakeLLM, make_llm) -> None:
    llm = make_llm()
    fake_llm.script('{"answer": 42,}')
    assert llm.json(user("What is six times seven?"), SCHEMA) == {"answer": 42}
    assert fake_llm.calls == 1
    (recorded,) = llm.cache.root.glob("*/*.json")
    assert "invalid" not in json.loads(recorded.read_text())  # a mended reply did not fail


def test_a_cut_off_reply_is_asked_again_not_mended(fake_llm: FakeLLM, make_llm) -> None:
    """Mending would close the cut reply and keep only what came before the cut."""
    llm = make_llm()
    fake_llm.script(Reply('{"answer": 4', finish_reason="length"), '{"answer": 42}')
    assert llm.json(user("q"), SCHEMA, max_tokens=100) == {"answer": 42}
    first, second = fake_llm.requests
    assert second["messages"] == first["messages"] and second["max_tokens"] == 200


def test_no_recorded_repair_would_now_be_skipped() -> None:
    """Every repair request in the committed cache shows the model a reply the local mend
    cannot make valid (or one cut off at max_tokens, which is never mended), so replaying the
    cache sends the same requests it recorded."""
    checked = 0
    for path in sorted(CACHE.glob("*/*.json")):
        text = path.read_text(encoding="utf-8")
        if REPAIR not in text:
            continue
        messages = json.loads(text)["request"]["messages"]
        asked, shown = messages[-1], messages[-2]
        if asked["role"] != "user" or not asked["content"].startswith(REPAIR):
            continue
        checked += 1
        error = asked["content"][len(REPAIR) :]
        if not error.startswith("not valid JSON") or "cut off at max_tokens" in error:
            continue  # a schema violation or a cut reply: the mend is not tried
        schema = _schema_of(json.loads(text)["request"])
        with pytest.raises(ValueError):
            mend_json_output(shown["content"], schema)
    assert checked > 0, "the committed cache holds repair requests"


def _schema_of(request: dict) -> dict:
    if "response_format" in request and "json_schema" in request["response_format"]:
        return request["response_format"]["json_schema"]["schema"]
    if "grammar" in request:
        schema = json.loads(request["grammar"].partition("%json ")[2])
        schema.pop("x-guidance", None)
        return schema
    system = request["messages"][0]["content"]
    return json.loads(system.partition("valid against this JSON schema:\n")[2])
