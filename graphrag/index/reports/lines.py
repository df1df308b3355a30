"""Community reports written as plain lines (``index.report_format = "lines"``): the form, and
reading it back.

Why: a report's JSON spends about a sixth of its tokens on keys, quotes, brackets and layout
(``benchmarks/index_cost.py --json-formats``), so the same report as lines would cost less to
write. Not the default: asked for lines, the 1.5B model looped inside its title or summary
line in 5 of the demo's 7 reports until ``report_max_tokens``, which the JSON schema's string
caps prevent (README, "Reports as plain lines").
"""

from __future__ import annotations

import re

_BULLET = re.compile(r"^(?:[-*•]|\d+[.)])\s+")
_RATING = re.compile(r"^rating\s*[:=]?\s*(\d+(?:\.\d+)?)(?:\s*/\s*10)?\s*(?:[-–—:]\s*(.*))?$", re.I)
_LABEL = re.compile(r"^(?:title|summary)\s*:\s*", re.I)


def parse_report_lines(text: str, max_findings: int = 99) -> dict:
    """Return the report a plain-lines reply holds, as ``report_schema``'s dict.

    The form (``prompts.REPORT_FORMS["lines"]``): ``# title``, summary lines, ``Rating: n -
    why``, a ``- summary: explanation`` line per finding. Repaired: Markdown bold, a "Title:"
    or "Summary:" label, numbered or starred findings, a finding without ": " (its
    explanation left empty), a rating out of 10 or outside 0-10 (clipped), findings past
    ``max_findings`` (dropped). Rejected (ValueError, naming what is missing): no title, no
    summary, no rating line, no finding, so the attempt is asked again.
    """
    lines = [ln.strip().replace("**", "") for ln in text.splitlines()]
    lines = [ln for ln in lines if ln and not ln.startswith("```")]
    title, rating, why = "", None, ""
    summary: list[str] = []
    findings: list[dict] = []
    for line in lines:
        if not title and line.startswith("#"):
            title = _LABEL.sub("", line.lstrip("#").strip())
        elif (match := _RATING.match(line)) and rating is None:
            rating, why = min(max(float(match.group(1)), 0.0), 10.0), (match.group(2) or "")
        elif bullet := _BULLET.match(line):
            head, _, tail = line[bullet.end() :].partition(": ")
            findings.append({"summary": head.strip(), "explanation": tail.strip()})
        elif not title and _LABEL.match(line) and line.lower().startswith("title"):
            title = _LABEL.sub("", line)
        elif not findings:
            summary.append(_LABEL.sub("", line))
    missing = [
        what
        for what, value in (
            ("a '# title' line", title),
            ("a summary line", summary),
            ("a 'Rating: n - why' line", rating is not None),
            ("a '- finding: explanation' line", findings),
        )
        if not value
    ]
    if missing:
        raise ValueError(f"the report lacks {', '.join(missing)}")
    return {
        "title": title,
        "summary": " ".join(summary),
        "rating": rating,
        "rating_explanation": why.strip(),
        "findings": findings[:max_findings],
    }


def format_report_lines(report: dict) -> str:
    """Return a report dict as the plain lines :func:`parse_report_lines` reads (a missing
    field left empty): what the recorded JSON reports would cost in that form
    (``benchmarks/index_cost.py --json-formats``)."""
    findings = report.get("findings") or []
    return "\n".join(
        [
            f"# {report.get('title', '')}",
            str(report.get("summary", "")),
            f"Rating: {report.get('rating', '')} - {report.get('rating_explanation', '')}",
            *(f"- {f.get('summary', '')}: {f.get('explanation', '')}" for f in findings),
        ]
    )
