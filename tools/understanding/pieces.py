"""How the words of a sentence are cut up before they are read: into pieces, and lists into items.

``_pieces`` splits a sentence at the separators between requests ("add milk, then delete task 3"),
never inside quotes; ``_items`` splits the list one request holds into its items ("eggs, bread and
butter", "1, 2 and 4", "tasks 1 to 3"), a quoted text staying one item; ``_quoted`` tells a title
the user put in quotes. Linear in the length of the text. Used by
``keel.tools.understanding.reading``, which reads each piece and item as a request.
"""

from __future__ import annotations

import re

_SPLIT = re.compile(r"[;,]|\band then\b|\bthen\b|\band also\b|\balso\b|\band\b|&", re.I)
"""Separators between requests (no whitespace in the pattern: pieces are stripped after)."""
_ITEM = re.compile(r",|\band\b|&|\bplus\b|\bor\b", re.I)
"""Separators between the items of a list inside one request."""
_NUMBER_LIST = re.compile(r"^(?:tasks?|numbers?|and|[\d#,&\s])+$", re.I)
"""Task numbers only: each character is taken one way, so a long one costs no more."""
_RANGE = re.compile(
    r"^(?:tasks? ?|numbers? ?|#)?(\d+) ?(?:-|to|through|thru|until) ?#?(\d+)$", re.I
)
RANGE_MAX = 100
"""The most tasks a range names ("tasks 1 to 3")."""
_QUOTED = re.compile(r'"[^"]*"|(?<!\w)\'[^\']*\'(?!\w)')
"""A quoted text: what it holds is one title ("add 'salt, pepper'")."""


def _pieces(text: str) -> list[tuple[int, int]]:
    """The spans of ``text`` between request separators (none in quotes), empty ones left out."""
    quoted = iter([m.span() for m in _QUOTED.finditer(text)])
    inside = next(quoted, None)
    spans, start = [], 0
    for sep in _SPLIT.finditer(text):
        while inside is not None and inside[1] <= sep.start():
            inside = next(quoted, None)  # both come in order: one walk over each
        if inside is not None and inside[0] < sep.start() < inside[1]:
            continue
        spans.append((start, sep.start()))
        start = sep.end()
    spans.append((start, len(text)))
    return [(a, b) for a, b in spans if text[a:b].strip()]


def _items(text: str, always: bool) -> list[str]:
    """The items of a list ("eggs, bread and butter"); ``always`` splits at "and" with no comma.

    A quoted text is one item, whatever it holds.
    """
    if text[:1] in "'\"" and text[-1:] == text[:1] and len(text) > 1:
        return [text]
    if (span := _RANGE.match(text)) and 0 <= int(span[2]) - int(span[1]) < RANGE_MAX:
        return [str(n) for n in range(int(span[1]), int(span[2]) + 1)]
    if not always and "," not in text:
        return [text]
    if _NUMBER_LIST.match(text):
        return re.findall(r"\d+", text)
    if always:
        items = _ITEM.split(text)
    else:  # "mac and cheese, bread and salad": the last item is split at "and" too
        *first, last = text.split(",")
        items = [*first, *_ITEM.split(last)]
        items[0] = items[0].rsplit(": ", 1)[-1]  # "get groceries: eggs, rice": what to get
    items = [i.strip(" '\"") for i in items]
    return [i for i in items if i and i.casefold() not in ("the", "then")]


def _quoted(title: str, text: str) -> bool:
    """``title`` stands in quotes in ``text``: the user's words, to be kept as they are."""
    return any(m.group()[1:-1].strip() == title for m in _QUOTED.finditer(text))
