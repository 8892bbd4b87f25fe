"""The decision table of the todo assistant as a parser from words to intended tool calls.

``parse_intents(text)`` splits a message into requests ("add milk and delete task 2") and maps each
to an ``Intent``: the tool, its arguments, and a task reference that may be an id or a title.
Used by the rule-based chat model (to choose tool calls) and by the plan node (one todolist item
per intent). Confirmation phrases inside a request ("delete task 3, yes I'm sure") are recognised
by ``confirms`` and never parsed as requests of their own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from keel.tools.todo import COMPLETE, CREATE, DELETE, GET, LIST, RENAME

_ID = r"(?:task\s*)?#?(?P<ref>.+?)"
_MORE = re.compile(
    r"^(?:show|list|display|give|see)(?: me)? (?:some |the )?(?:more|next)"
    r"(?: (?:tasks|todos|ones|page|page of tasks))?(?: please)?$"
    r"|^(?:more|next) (?:tasks|todos|page)(?: please)?$",
    re.I,
)
"""The next page of the list: "show more tasks", "next page", "show the next page"."""
_TABLE: list[tuple[str, re.Pattern[str]]] = [
    (LIST, _MORE),
    (
        LIST,
        re.compile(
            r"^(?:what'?s|what is) (?:on )?(?:my|the) (?:todo )?list\??$"
            r"|^show (?:me )?(?:all|everything)(?: (?:my )?tasks)?$"
            r"|^(?:show|list|display) (?:me )?(?:all )?(?:of )?(?:my |the )?(?:tasks|todos|list)$"
            r"|^list$",
            re.I,
        ),
    ),
    (GET, re.compile(r"^(?:show|get|view) (?:me )?task\s*#?(?P<ref>\d+)$", re.I)),
    (GET, re.compile(rf"^details (?:for|of|on|about) {_ID}$", re.I)),
    (
        RENAME,
        re.compile(rf"^(?:rename|retitle) {_ID} (?:to|as|into) (?P<title>.+)$", re.I),
    ),
    (
        COMPLETE,
        re.compile(
            rf"^(?:finish(?:ed)?|complete|done with|mark|check off|tick off) {_ID}"
            r"(?: as (?:done|complete|completed|finished))?$",
            re.I,
        ),
    ),
    (
        DELETE,
        re.compile(rf"^(?:delete|remove|drop) {_ID}(?: from (?:my |the )?list)?$", re.I),
    ),
    (
        CREATE,
        re.compile(
            r"^(?:please )?(?:add|create|remind me to|new task:?)\s+(?:a )?(?:new )?(?:task:?\s+)?"
            r"(?:to )?(?P<title>.+?)(?: to (?:my |the )?(?:todo )?list)?$",
            re.I,
        ),
    ),
]

YES_WORDS = frozenset({"yes", "y", "yep", "yeah", "sure", "confirm", "confirmed"})
"""Words that say yes: to a confirmation question, or inside the request itself."""
SURE_PHRASES = frozenset({("i'm", "sure"), ("im", "sure"), ("i", "am", "sure"), ("do", "it")})
"""Phrases that say yes on their own ("I'm sure") or after a yes word ("yes, do it")."""

_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
_ONLY_WORDS = re.compile(r"[a-z' ,.!]*")
_SURE = re.compile(r"\b(?:i'?m sure|i am sure)\b")
_SPLIT = re.compile(r"[;,]|\band then\b|\bthen\b|\band also\b|\balso\b|\band\b", re.I)
"""Separators between requests. No whitespace around them in the pattern: the pieces are
stripped afterwards, so no two quantifiers ever compete for the same spaces."""


def normalize(text: str) -> str:
    """Whitespace runs (newlines too) as one space, curly apostrophes straight: linear time."""
    return " ".join(text.replace("\u2019", "'").split())


def _yes_words(text: str) -> tuple[str, ...] | None:
    """The words of ``text`` when it holds nothing but words and ``,.!`` (lower case)."""
    lowered = normalize(text).lower()
    if not _ONLY_WORDS.fullmatch(lowered):
        return None
    return tuple(_WORD.findall(lowered))


@dataclass(frozen=True)
class Intent:
    """One recognised request: a tool and what it needs."""

    tool: str
    text: str
    """The words that asked for it."""
    ref: str | None = None
    """The task named: digits for an id, else a title to look up."""
    args: dict[str, Any] = field(default_factory=dict)
    more: bool = False
    """A list request for the page after the one shown last ("show more tasks")."""

    @property
    def task_id(self) -> int | None:
        """The task id when the request named one by number."""
        return int(self.ref) if self.ref is not None and self.ref.isdigit() else None

    @property
    def needs_lookup(self) -> bool:
        """The request names a task by title, so its id must be found first."""
        return self.ref is not None and self.task_id is None


def _clean_ref(ref: str) -> str:
    ref = ref.strip().strip("'\"").strip()
    ref = re.sub(r"^(?:the |my )?(?:task )?#?", "", ref, flags=re.I).strip("'\" ")
    return ref


def _match(segment: str) -> Intent | None:
    text = segment.strip().rstrip(".!?").strip()
    for tool, pattern in _TABLE:
        m = pattern.match(text)
        if not m:
            continue
        groups = m.groupdict()
        ref = _clean_ref(groups["ref"]) if groups.get("ref") else None
        args: dict[str, Any] = {}
        if groups.get("title"):
            args["title"] = groups["title"].strip().strip("'\"").strip()
        if tool != LIST and "ref" in pattern.groupindex and not ref:
            return None
        return Intent(tool=tool, text=text, ref=ref, args=args, more=pattern is _MORE)
    return None


def is_confirmation(text: str) -> bool:
    """The words are only a yes ("yes", "yep, I'm sure", "confirm", "do it"); "..." is none."""
    words = _yes_words(text)
    if not words:
        return False
    count = 0
    while count < len(words) and words[count] in YES_WORDS:
        count += 1
    rest = words[count:]
    return (count > 0 and not rest) or rest in SURE_PHRASES


def is_yes(answer: object) -> bool:
    """The answer to a confirmation question says yes: it starts with a yes word or is one."""
    words = _WORD.findall(normalize(str(answer or "")).lower())
    return bool(words) and (words[0] in YES_WORDS or is_confirmation(str(answer)))


def _pieces(text: str) -> list[tuple[int, int]]:
    """The spans of ``text`` between request separators, empty ones left out."""
    spans, start = [], 0
    for sep in _SPLIT.finditer(text):
        spans.append((start, sep.start()))
        start = sep.end()
    spans.append((start, len(text)))
    return [(a, b) for a, b in spans if text[a:b].strip()]


def confirms(message: str) -> bool:
    """The message carries an explicit yes ("delete task 3, yes I'm sure")."""
    text = normalize(message)
    if _SURE.search(text.lower()):
        return True
    return any(is_confirmation(text[a:b]) for a, b in _pieces(text))


def parse_intents(message: str) -> list[Intent]:
    """Every request in ``message`` that the decision table recognises, in order.

    A piece that is no request of its own is glued back onto the one before it, so "add bread and
    butter" is one task titled "bread and butter". Linear in the length of the message: the text
    is normalised first (one space between words), and no pattern backtracks over a run.
    """
    text = normalize(message)
    intents: list[Intent] = []
    current: tuple[int, int] | None = None
    for a, b in _pieces(text):
        piece = text[a:b]
        if is_confirmation(piece) or not any(c.isalnum() for c in piece):
            continue  # a yes, or punctuation: no request, and nothing to glue
        if current and _match(piece) is None:
            current = (current[0], b)
            continue
        if current and (found := _match(text[current[0] : current[1]])):
            intents.append(found)
        current = (a, b)
    if current and (found := _match(text[current[0] : current[1]])):
        intents.append(found)
    return intents
