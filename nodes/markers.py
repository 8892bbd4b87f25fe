r"""The markers keel's messages carry, shared by the graph and the rule-based model.

The DONE marker is how the assistant says a task is really finished: a reply is finished when one
of its lines matches it (default ``^\s*DONE:``, case-insensitive; ``KEEL_DONE_MARKER`` changes it).
The marker line is for the graph, not for the user: ``DoneLines`` takes it out of the model's
answer as it arrives, ``strip_done`` out of a whole text. The nudge prefix and the resume and
synthetic flags mark the messages keel itself writes for the model.
"""

from __future__ import annotations

import re
from functools import lru_cache

DEFAULT_DONE_MARKER = r"^\s*DONE:"
NUDGE_PREFIX = "Not finished yet."
"""The start of the reminder the response node sends when an answer did not finish the task."""
RESUME_KWARG = "keel_resume"
"""additional_kwargs key of a resume's continuation message: the steps still open."""
SYNTHETIC = "keel_synthetic"
"""additional_kwargs flag of messages keel writes for the model only (never logged)."""
_LINE_END = re.compile(r"\r\n|\r|\n")
"""Real line ends only: ``str.splitlines`` would also break at U+2028, U+0085 and friends, so a
"DONE:" after one of those would hide the rest of a reply."""


def lines(text: str) -> list[str]:
    """``text`` split at its line ends: LF, CRLF, CR."""
    return _LINE_END.split(text)


@lru_cache(maxsize=16)
def _compile(marker: str) -> re.Pattern[str]:
    return re.compile(marker, re.IGNORECASE)


def has_done(text: str, marker: str = DEFAULT_DONE_MARKER) -> bool:
    """Some line of ``text`` matches the DONE marker."""
    pattern = _compile(marker)
    return any(pattern.search(line) for line in lines(text))


def strip_done(text: str, marker: str = DEFAULT_DONE_MARKER) -> str:
    """``text`` without the lines that match the DONE marker."""
    pattern = _compile(marker)
    kept = [line for line in lines(text) if not pattern.search(line)]
    return "\n".join(kept).strip()


class DoneLines:
    """The text of one message, passed on as it arrives, without the lines that mark it done.

    A line is held back until it is complete (the marker may need the whole line); blank lines at
    the start and between kept lines are kept only when more text follows, so the pieces joined
    give what ``strip_done`` gives. ``done`` tells whether a DONE line went by.
    """

    def __init__(self, marker: str = DEFAULT_DONE_MARKER) -> None:
        """Filter with ``marker``."""
        self.pattern = _compile(marker)
        self.pending = ""
        self.blank = 0
        self.started = False
        self.done = False

    def feed(self, text: str) -> list[str]:
        """The pieces of text that may be shown now."""
        buffer = self.pending + text
        held = "\r" if buffer.endswith("\r") else ""  # a CRLF may be split across two pieces
        *complete, rest = _LINE_END.split(buffer[: len(buffer) - len(held)])
        self.pending = rest + held
        return [piece for line in complete if (piece := self._line(line))]

    def flush(self) -> list[str]:
        """The last line, unless it is the DONE line."""
        rest, self.pending = self.pending.rstrip("\r"), ""
        piece = self._line(rest) if rest.strip() else ""
        return [piece] if piece else []

    def _line(self, line: str) -> str:
        if self.pattern.search(line):
            self.done = True
            return ""
        if not line.strip():
            self.blank += self.started
            return ""
        piece = "\n" * (self.blank + self.started) + line
        self.started, self.blank = True, 0
        return piece
