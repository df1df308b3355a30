"""A streamed JSON report ended at its first copied finding (``index.stop_report_copies``):
over the recorded report replies streamed one token at a time, and through the transport
and the report stage with a fake endpoint, the kept reply is closed JSON valid against the
report schema, keeps the findings before the copy word for word, and replays."""

from __future__ import annotations

import json

import pytest
from conftest import RECORDED_CACHE, FakeLLM, Reply

from graphrag import prompts
from graphrag.index.reports.stop import COPY_CHARS, REPORT_COPY, REPORT_COPY_STOP, ReportCopyStop
from graphrag.index.reports.write import write_community_reports
from graphrag.llm.cache import ResponseCache
from graphrag.llm.client import ChatLLM, run_sync
from graphrag.llm.replies import parse_json_output
from graphrag.text import tokens


def norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def streamed_stop(text: str) -> tuple[int, str] | None:
    """Feed ``text`` to the rule one Qwen token at a time, as the server streams it."""
    rule, partial = ReportCopyStop(), ""
    for token in tokens.encode(text):
        partial += tokens.decode([token])
        if (cut := rule.check(partial)) is not None:
            return cut
    return None


def copies_earlier(report: dict, index: int) -> bool:
    """Whether finding ``index`` starts (COPY_CHARS characters) as an earlier text does: the
    summary, the rating explanation or another finding's summary or explanation."""
    finding = report["findings"][index]
    earlier = [report["summary"], report["rating_explanation"]] + [
        text
        for i, other in enumerate(report["findings"])
        if i != index
        for text in (other["summary"], other["explanation"])
    ]
    heads = [norm(t)[:COPY_CHARS] for t in (finding["summary"], finding["explanation"])]
    return any(
        len(head) >= 30 and any(norm(e)[: len(head)] == head for e in earlier) for head in heads
    )


def recorded_reports() -> list[tuple[str, dict, int]]:
    """(reply, parsed report, maxItems) of every recorded JSON community report."""
    found = []
    for record in ResponseCache(RECORDED_CACHE, "replay").records("community_report"):
        reply = record["response"]["choices"][0]["message"]["content"]
        try:
            report = json.loads(reply)
        except ValueError:
            continue  # a reply the attempt logic repaired: not a stream the rule would see
        schema = record["request"]["response_format"]["json_schema"]["schema"]
        found.append((reply, report, schema["properties"]["findings"]["maxItems"]))
    return found


RECORDED = recorded_reports()


def test_recorded_report_replies_end_at_their_first_copied_finding() -> None:
    """Every recorded report streamed token by token: where the rule stops, the kept reply
    validates, holds the findings before the stop unchanged, and the first finding it left
    out copies earlier text; where it does not stop, no finding after the first is a copy
    of a finding before it or of the summary."""
    assert len(RECORDED) >= 200
    stopped = 0
    for reply, report, max_items in RECORDED:
        cut = streamed_stop(reply)
        findings = report["findings"]
        if cut is None:
            # a copy the rule let through can only be of a later finding or a short string
            assert not any(
                copies_earlier({**report, "findings": findings[: i + 1]}, i)
                for i in range(1, len(findings))
            ), reply
            continue
        stopped += 1
        offset, why = cut
        assert why == REPORT_COPY
        kept = parse_json_output(
            ReportCopyStop().close(reply[:offset]), prompts.report_schema(max_items)
        )
        n = len(kept["findings"])
        assert 1 <= n < len(findings)
        assert kept["findings"] == findings[:n]
        assert {k: kept[k] for k in ("title", "summary", "rating")} == {
            k: report[k] for k in ("title", "summary", "rating")
        }
        assert copies_earlier({**report, "findings": findings[: n + 1]}, n), reply
    # the recorded replies copy often: about a third of them are stopped
    assert stopped >= len(RECORDED) // 4


def report_json(summary: str, findings: list[tuple[str, str]]) -> str:
    """A report reply pretty-printed as the model writes it."""
    return json.dumps(
        {
            "title": "Port Aldry",
            "summary": summary,
            "rating": 7,
            "rating_explanation": "The town is where the cooperative and the institute are.",
            "findings": [{"summary": s, "explanation": e} for s, e in findings],
        },
        indent=2,
    )


SUMMARY = (
    "Port Aldry is a harbour town in Kestrel Bay where the Kestrel Bay Fishing Cooperative "
    "and the Kestrel Bay Marine Institute are based."
)
FIRST = ("The cooperative grew from eleven families", "It counts 62 boats and 190 members.")
OWN = "Storm Corvin sank eleven of the cooperative's boats at their moorings in October 2022"
SECOND = ("Storm Corvin sank eleven boats", "The storm breached the old harbour wall in 2022.")


def pieces(text: str) -> list[str]:
    return [tokens.decode([t]) for t in tokens.encode(text)]


@pytest.mark.parametrize(
    ("findings", "kept"),
    [
        # the first cold live run's Port Aldry report: every finding the summary again
        ([(SUMMARY[:100], SUMMARY)] * 3, 1),
        # a new finding, then the first one again
        ([FIRST, SECOND, FIRST], 2),
        # a new summary whose explanation is the report summary
        ([FIRST, ("Where it is", SUMMARY)], 1),
        # no copy: nothing stops
        ([FIRST, SECOND], 2),
        # a finding whose explanation starts with its own summary is not a copy
        ([FIRST, (OWN, OWN + ", and it breached the old harbour wall.")], 2),
    ],
    ids=["summary thrice", "finding again", "explanation copies", "no copy", "own summary"],
)
def test_a_streamed_report_keeps_the_findings_before_the_copy(
    fake_llm: FakeLLM, make_llm, make_settings, findings: list, kept: int
) -> None:
    reply = report_json(SUMMARY, findings)
    fake_llm.script(Reply(pieces=pieces(reply)))
    llm = make_llm()
    messages = [{"role": "user", "content": "Write the report."}]
    schema = prompts.report_schema(3)
    report = run_sync(
        llm.ajson(messages, schema, name="community_report", stop_rule=REPORT_COPY_STOP)
    )
    assert [(f["summary"], f["explanation"]) for f in report["findings"]] == findings[:kept]
    assert report["summary"] == SUMMARY
    assert fake_llm.calls == 1
    # replay: the kept report from the cache alone
    replay = ChatLLM(make_settings(fake_llm.base_url, cache={"mode": "replay"}))
    again = run_sync(
        replay.ajson(messages, schema, name="community_report", stop_rule=REPORT_COPY_STOP)
    )
    assert again == report and fake_llm.calls == 1


def test_a_long_copy_is_not_generated(fake_llm: FakeLLM, make_llm) -> None:
    """The stream is closed at the copy: the endpoint does not get to write the rest (more
    than the socket buffers hold), and the tokens counted are those sent before the close."""
    loop = " ".join([SUMMARY] * 3000)
    streamed = pieces(report_json(SUMMARY, [FIRST, (SUMMARY[:100], loop)]))
    fake_llm.script(Reply(pieces=streamed))
    completion = run_sync(
        make_llm().achat(
            [{"role": "user", "content": "Write the report."}], stop_rule=REPORT_COPY_STOP
        )
    )
    assert completion.stopped_early == REPORT_COPY
    assert [f["summary"] for f in json.loads(completion.text)["findings"]] == [FIRST[0]]
    assert fake_llm.streams_cut == 1 and fake_llm.pieces_sent[0] < len(streamed)
    assert completion.usage.completion_tokens < len(streamed) // 10


def test_the_report_stage_streams_and_stops_at_the_copy(
    fake_llm: FakeLLM, make_llm, karate_index: dict, tmp_path
) -> None:
    """With ``index.stop_report_copies``, every report request is streamed and ended at the
    copy; the stored reports keep the findings before it."""
    reply = report_json(SUMMARY, [FIRST, SECOND, FIRST])
    fake_llm.respond_with(lambda body: Reply(pieces=pieces(reply)))
    llm = make_llm(
        index={"min_report_entities": 0, "stop_report_copies": True},
        cache={"path": str(tmp_path / "cache")},
    )
    reports, errors = write_community_reports(
        karate_index["communities"],
        karate_index["entities"],
        karate_index["relationships"],
        llm,
        llm.settings.index,
        progress=False,
    )
    asked = fake_llm.requests
    assert errors.empty and len(reports) == len(asked) > 1
    assert all(body.get("stream") for body in asked)
    stored = [
        [(f["summary"], f["explanation"]) for f in findings] for findings in reports["findings"]
    ]
    assert all(findings == [FIRST, SECOND] for findings in stored)
    recorded = ResponseCache(tmp_path / "cache", "replay").records("community_report")
    assert {record.get("stopped_early") for record in recorded} == {REPORT_COPY}
