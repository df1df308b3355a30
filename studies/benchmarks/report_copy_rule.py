"""The copy rule once offered for streamed JSON community reports (the removed
``index.stop_report_copies``, docs/research-log.md "Report copy rule removed"): end the reply
at the first finding after the first whose summary or explanation starts (``COPY_CHARS``,
normalized) as earlier report text does, and close the JSON so it parses like any other reply.
Kept here so index_cost.py can still measure what it would save on recorded replies.
"""

from __future__ import annotations

import json

COPY_CHARS = 60  # characters of a string compared with the start of an earlier one
MIN_JUDGED = 30  # a complete string shorter than this is not judged
REPORT_COPY = "finding copies earlier report text"
CLOSE = "\n  ]\n}"


def normalized(text: str) -> str:
    """``text`` as the rule compares it: whitespace collapsed, case folded."""
    return " ".join(text.split()).casefold()


class ReportCopyStop:
    """Fed the growing JSON report reply, returns where to stop once a finding after the first
    copies earlier text; a small scanner reads each character once."""

    def __init__(self, copy_chars: int = COPY_CHARS, min_judged: int = MIN_JUDGED) -> None:
        self.copy_chars = copy_chars
        self.min_judged = min_judged
        self._pos = 0
        self._in_string = False
        self._escaped = False
        self._is_value = False  # the current string is a value (a ':' came before it)
        self._start = 0  # where the current string's opening quote is
        self._chars: list[str] = []
        self._last_key: tuple[int, str] | None = None  # (offset, text) of the last key string
        self._key = ""
        self._value_next = False  # the next string is a value
        self._in_findings = False
        self._finding = -1  # index of the finding being read
        self._finding_start = 0  # offset of its '{'
        self._earlier: list[tuple[int, str]] = []  # (finding index or -1, normalized text)

    def close(self, kept: str) -> str:
        """Return the kept text closed as JSON: the findings array and the report end."""
        return kept.rstrip().removesuffix(",").rstrip() + CLOSE

    def check(self, partial: str) -> tuple[int, str] | None:
        """Return (offset of the copying finding's '{', why) once the reply should end."""
        for i in range(self._pos, len(partial)):
            ch = partial[i]
            if self._in_string:
                if self._escaped:
                    self._escaped = False
                    self._chars.append(ch)
                elif ch == "\\":
                    self._escaped = True
                elif ch == '"':
                    self._in_string = False
                    text = "".join(self._chars)
                    if not self._is_value:
                        self._last_key = (self._start, text)
                    elif stop := self._read_value(normalized(text), partial):
                        return stop
                else:
                    self._chars.append(ch)
            elif ch == '"':
                self._in_string, self._start, self._chars = True, i, []
                self._is_value = self._value_next
            elif ch == ":" and self._last_key is not None:
                self._read_key(*self._last_key, partial)
                self._last_key, self._value_next = None, True
            elif not ch.isspace():
                self._value_next = False
        self._pos = len(partial)
        if self._in_string and self._is_value and self._in_findings:
            # a value still arriving: judged as soon as COPY_CHARS of it are in
            text = normalized("".join(self._chars))
            if len(text) >= self.copy_chars:
                return self._judge(text, partial)
        return None

    def _read_key(self, start: int, key: str, partial: str) -> None:
        self._key = key
        if key == "findings" and not self._in_findings:
            self._in_findings = True
        elif self._in_findings and key == "summary":
            self._finding += 1
            self._finding_start = partial.rfind("{", 0, start)

    def _read_value(self, text: str, partial: str) -> tuple[int, str] | None:
        """Judge a complete value string (in a finding), then remember it."""
        if not self._in_findings:
            if self._key in ("summary", "rating_explanation"):
                self._earlier.append((-1, text))
            return None
        stop = self._judge(text, partial) if len(text) >= self.min_judged else None
        self._earlier.append((self._finding, text))
        return stop

    def _judge(self, text: str, partial: str) -> tuple[int, str] | None:
        if self._finding < 1:
            return None
        head = text[: self.copy_chars]
        for finding, earlier in self._earlier:
            if finding != self._finding and earlier[: len(head)] == head:
                kept = partial[: self._finding_start]
                try:
                    json.loads(self.close(kept))
                except ValueError:
                    return None  # not at a point where closing gives JSON: let it run
                return self._finding_start, REPORT_COPY
        return None
