r"""The DONE marker: how the assistant says a task is really finished.

A reply is finished when one of its lines matches the marker (default ``^\s*DONE:``,
case-insensitive; ``KEEL_DONE_MARKER`` changes it). The marker line is for the graph, not for the
user: ``strip_done`` removes it from what is shown. Used by the response node and the turn runner.
"""

from __future__ import annotations

import re
from functools import lru_cache

DEFAULT_DONE_MARKER = r"^\s*DONE:"
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
