r"""What text keel's tables take, and how a name or a title is cleaned before it is stored.

``storable`` refuses what a database cannot hold as text (NUL, which PostgreSQL refuses and
SQLite would keep, and lone surrogates, which are no UTF-8): the API answers 422 for it on every
backend. ``one_line`` cleans a name or a title a person typed: line breaks and tabs become one
space, control characters (C0, C1, ANSI escape sequences) and bidirectional overrides are
removed, so "\u202egnp.exe" cannot show as "exe.png". Used by the API's schemas, the conversation
store and the task store.
"""

from __future__ import annotations

import re
import unicodedata

ESCAPE_SEQUENCE = re.compile(r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]")
"""An ANSI control sequence (colours, cursor moves); its three parts take disjoint characters."""
BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
"""Marks and overrides that change the direction text is shown in."""


class UnstorableText(ValueError):
    """Text no database of keel's can hold as it is (a NUL, a lone surrogate)."""


def storable(text: str) -> str:
    """``text`` as it is; UnstorableText when it holds a NUL or a lone surrogate."""
    if "\x00" in text:
        raise UnstorableText("must not contain NUL characters")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # "\ud800" in JSON reads as a lone surrogate
        raise UnstorableText("must be valid Unicode text (no lone surrogates)") from None
    return text


def _shown(char: str) -> bool:
    """A character that shows as itself: no control character, no direction override."""
    return unicodedata.category(char) != "Cc" and char not in BIDI_CONTROLS


def one_line(text: str) -> str:
    """A storable name or title on one line, without control characters; may come out empty."""
    words = ESCAPE_SEQUENCE.sub("", storable(text)).split()  # newlines and tabs part words too
    return " ".join(filter(None, ("".join(filter(_shown, word)) for word in words)))
