"""How people ask for things: requests parsed by the tools' phrasings, and the words of a yes.

``parse_intents(text, tools)`` splits a message into requests ("add milk and delete task 2") and
maps each to an ``Intent`` by the phrasings the tools declare (``keel.tools.spec``): the tool, its
arguments, and a task reference that may be an id or a title. Used by the rule-based chat model
(to choose tool calls) and by the plan node (one todolist item per intent). Confirmation phrases
inside a request ("delete task 3, yes I'm sure") are recognised by ``confirms`` and never parsed
as requests of their own; ``is_yes`` reads the answer to a confirmation question.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.tools import BaseTool

from keel.tools.spec import ToolSpec, spec_of
from keel.tools.todo import TODO_TOOLS


@functools.cache
def _table(specs: tuple[tuple[str, ToolSpec], ...]) -> list[tuple[str, re.Pattern[str]]]:
    """The decision table of ``specs`` (tool name, spec): every phrasing compiled, in order."""
    return [
        (name, re.compile(pattern, re.I)) for name, spec in specs for pattern in spec.patterns()
    ]


def specs_of(tools: Sequence[BaseTool | Any]) -> tuple[tuple[str, ToolSpec], ...]:
    """The (name, spec) pairs of ``tools``, the decision table's key."""
    return tuple((t.name, spec_of(t)) for t in tools if hasattr(t, "name"))


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


def _match(segment: str, table: list[tuple[str, re.Pattern[str]]]) -> Intent | None:
    text = segment.strip().rstrip(".!?").strip()
    for tool, pattern in table:
        m = pattern.match(text)
        if not m:
            continue
        groups = m.groupdict()
        ref = _clean_ref(groups["ref"]) if groups.get("ref") else None
        if "ref" in pattern.groupindex and not ref:
            return None
        args = {
            name: value.strip().strip("'\"").strip()
            for name, value in groups.items()
            if value and name not in ("ref", "more")
        }
        return Intent(tool=tool, text=text, ref=ref, args=args, more=bool(groups.get("more")))
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


def parse_intents(message: str, tools: Sequence[BaseTool | Any] = TODO_TOOLS) -> list[Intent]:
    """Every request in ``message`` that the phrasings of ``tools`` recognise, in order.

    A piece that is no request of its own is glued back onto the one before it, so "add bread and
    butter" is one task titled "bread and butter". Linear in the length of the message: the text
    is normalised first (one space between words), and no pattern backtracks over a run. A turn
    reads the same message several times (the topic detector, the plan, each offline model
    call): the last parses are kept.
    """
    return list(_parse(message, specs_of(tools)))


@functools.lru_cache(maxsize=256)
def _parse(message: str, specs: tuple[tuple[str, ToolSpec], ...]) -> tuple[Intent, ...]:
    text = normalize(message)
    table = _table(specs)
    intents: list[Intent] = []
    current: tuple[int, int] | None = None
    for a, b in _pieces(text):
        piece = text[a:b]
        if is_confirmation(piece) or not any(c.isalnum() for c in piece):
            continue  # a yes, or punctuation: no request, and nothing to glue
        if current and _match(piece, table) is None:
            current = (current[0], b)
            continue
        if current and (found := _match(text[current[0] : current[1]], table)):
            intents.append(found)
        current = (a, b)
    if current and (found := _match(text[current[0] : current[1]], table)):
        intents.append(found)
    return tuple(intents)
