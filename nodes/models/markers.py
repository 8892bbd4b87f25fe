r"""The markers keel's messages carry, shared by the graph and the rule-based model.

The DONE marker is how the assistant says a task is really finished: a reply is finished when one of
its lines matches it (default ``^\s*KEEL DONE:``, case-insensitive; ``KEEL_DONE_MARKER`` changes
it). A marker a model wrote after text on the same line starts a line of its own (a small model
writes "Added it. KEEL DONE: added"): the marker's line is taken out, the text before stays. The
product's name before DONE keeps prose apart from it: a reply line "Done: I saved the task." is the
reply's own text, never the marker. The marker line is for the graph, not for the user: every model
keel calls is a ``DoneLinesOut`` (``keel.nodes.models.answers``), which takes it out of the model's
answer as it arrives (``DoneLines``). The same filter reads a tool call the model wrote as text
(``keel.nodes.models.text_calls``) as the call it is, and, for any model but keel's offline one
(``copies_keel``), drops the lines of keel's own text it copied (``keel.nodes.models.notes``), so no
person sees either. The nudge prefix and the resume and synthetic flags mark the messages keel
itself writes for the model.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from keel.nodes.models.notes import Echoes
from keel.nodes.models.text_calls import opens_call, read_calls

DEFAULT_DONE_MARKER = r"^\s*KEEL DONE:"
DONE_KEY = "keel_done"
"""``response_metadata`` key of an assistant message whose DONE line was taken out."""
UNUSABLE_CALL = "keel_unusable_call"
"""``response_metadata`` key of an answer whose text held a tool call keel could not use."""
RESUME_KWARG = "keel_resume"
"""additional_kwargs key of a resume's continuation message: the steps still open."""
SYNTHETIC = "keel_synthetic"
"""additional_kwargs flag of messages keel writes for the model only (never logged)."""
_LINE_END = re.compile(r"\r\n|\r|\n")
"""Real line ends only: ``str.splitlines`` would also break at U+2028, U+0085 and friends, so a
"KEEL DONE:" after one of those would hide the rest of a reply."""


def lines(text: str) -> list[str]:
    """``text`` split at its line ends: LF, CRLF, CR."""
    return _LINE_END.split(text)


@lru_cache(maxsize=16)
def _compile(marker: str) -> re.Pattern[str]:
    return re.compile(marker, re.IGNORECASE)


_WORD_START = re.compile(r"\s(?=\S)")


def done_at(pattern: re.Pattern[str], line: str) -> int | None:
    """Where the DONE marker's line starts in ``line``: 0 when the line matches it, the start of
    a later word when the rest of the line from there matches it (a marker written after text),
    None when it has none.
    """  # noqa: D205
    if pattern.search(line):
        return 0
    for word in _WORD_START.finditer(line):
        if pattern.search(line[word.end() :]):
            return word.end()
    return None


def has_done(text: str, marker: str = DEFAULT_DONE_MARKER) -> bool:
    """Some line of ``text`` matches the DONE marker (or ends in it, after text)."""
    pattern = _compile(marker)
    return any(done_at(pattern, line) is not None for line in lines(text))


class DoneLines:
    """The text of one message, passed on as it arrives, without the lines that mark it done.

    A line is held back until it is complete (the marker may need the whole line); blank lines at
    the start and between kept lines are kept only when more text follows, so the pieces joined
    are the text's other lines, stripped. ``done`` tells whether a DONE line went by. Lines that
    copy keel's own text are dropped too (``Echoes``). With the bound ``tools`` given, a line that
    may open a tool call written as text is held with all that follows it until the end: ``calls``
    are then the calls read from it (the rest of the held text passed on as text), ``unusable``
    tells that it was shaped like a call keel cannot use (none of it is passed on).
    """

    def __init__(
        self, marker: str = DEFAULT_DONE_MARKER, tools: Any = None, echoes: bool = True
    ) -> None:
        """Filter with ``marker``; read tool calls written as text for ``tools``; drop the lines
        that copy keel's own text unless ``echoes`` is false.
        """  # noqa: D205
        self.pattern = _compile(marker)
        self.tools = tools or None
        self.echoes = Echoes() if echoes else None
        self.pending = ""
        self.held: list[str] | None = None
        self.blank = 0
        self.started = False
        self.done = False
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.unusable = False

    def feed(self, text: str) -> list[str]:
        """The pieces of text that may be shown now."""
        buffer = self.pending + text
        held = "\r" if buffer.endswith("\r") else ""  # a CRLF may be split across two pieces
        *complete, rest = _LINE_END.split(buffer[: len(buffer) - len(held)])
        self.pending = rest + held
        return [piece for line in complete if (piece := self._take(line))]

    def flush(self) -> list[str]:
        """The last line, unless it is the DONE line; then what was held, unless it was calls."""
        rest, self.pending = self.pending.rstrip("\r"), ""
        pieces = [piece] if rest.strip() and (piece := self._take(rest)) else []
        if self.held is None:
            return pieces
        held, self.held = self.held, None
        found = read_calls("\n".join(held), self.tools or ())  # before DONE lines are cut
        if not found.calls and not found.unusable:  # the DONE line may be what spoils it
            kept = [cut for line in held if (cut := self._before_done(line)) is line or cut]
            found = read_calls("\n".join(kept), self.tools or ())
            held = kept if not found.calls and not found.unusable else held
        self.calls, self.unusable = found.calls, found.unusable
        if self.unusable:
            return pieces
        shown = lines(found.prose) if self.calls else held
        return [*pieces, *(piece for line in shown if (piece := self._line(line)))]

    def _take(self, line: str) -> str:
        if self.held is not None:
            self.held.append(line)
            return ""
        if self.tools is not None and opens_call(line):
            self.held = [line]
            return ""
        return self._line(line)

    def _before_done(self, line: str) -> str:
        """``line`` up to the DONE marker's line (all of it when it has none); a marker after text
        on the line counts for a model that may copy keel's text (any but keel's own).
        """  # noqa: D205
        start = (
            done_at(self.pattern, line)
            if self.echoes is not None
            else (0 if self.pattern.search(line) else None)
        )
        if start is None:
            return line
        self.done = True
        return line[:start].rstrip()

    def _line(self, line: str) -> str:
        cut = self._before_done(line)
        if cut is not line and not cut.strip():
            return ""
        kept = self.echoes.clean(cut) if self.echoes is not None else cut
        if not kept.strip():
            self.blank += self.started and not line.strip()
            return ""
        piece = "\n" * (self.blank + self.started) + kept
        self.started, self.blank = True, 0
        return piece
