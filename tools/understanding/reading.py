"""What a message asks for, as the offline model and the plan read it: requests, or a kind of talk.

``understand(message, tools)`` splits a message into requests and maps each to an ``Intent`` by the
phrasings and examples the tools declare (``keel.tools.spec``), around the words people wrap
requests in ("could you please ... for me") and with command words misspelt once
(``keel.tools.understanding.words``). Lists become one request each ("add eggs, bread and butter":
three; "complete 1, 2 and 4": three; "delete the milk and the dentist ones": two), while a plain
"bread and butter" stays one title. "I called mom" is a request for the tool that a report of a done
task asks for (``told_done``). A message with no request is a kind of talk: a greeting, thanks, a
goodbye, a question for help, a question outside todos, or something keel cannot place (with the
closest request it knows). Deterministic, CPU only, linear in the length of the message; a turn
reads the same message several times (the topic detector, the plan, each offline model call), so the
last results are kept.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from langchain_core.tools import BaseTool

from keel.tools.spec import ToolSpec
from keel.tools.understanding.nlu import Declared, declared, reader_for
from keel.tools.understanding.nlu.settle import SURE, guess, settle
from keel.tools.understanding.phrasings import Intent, Table, match, specs_of, table_of
from keel.tools.understanding.pieces import _items, _pieces, _quoted
from keel.tools.understanding.remarks import ASIDE, BESIDE, REMARK, SELF, told_done
from keel.tools.understanding.topic_phrases import after_opening
from keel.tools.understanding.words import strip_politeness
from keel.tools.yes_no import confirms as confirms_in
from keel.tools.yes_no import is_confirmation

MAX_REQUESTS = 100
"""The most requests one message may make; past it, keel asks for fewer and does nothing."""
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_AFTER = re.compile(r":\s+|\s+[-\u2013\u2014]+\s+")
"""What introduces a request inside a message ("start fresh - delete all my todos")."""
SENTENCES_MAX = 200
"""Sentences one message may have; past it, keel asks for a shorter one and reads none."""
PIECES_MAX = 1000
"""Pieces one sentence may have ("a, b, c, ..."); past it, keel asks for fewer and reads none."""
MERGED_MAX_CHARS = 300
"""A sentence that asks nothing is read with the request before it ("add see Dr. Smith") while
both are this short."""
_REF_ONLY = re.compile(r"^(?:tasks? |numbers? |#)?#?\d+$", re.I)
"""A piece that only names a task by number: an item of a list, never a request of its own."""


def normalize(text: str) -> str:
    """Whitespace runs as one space, curly apostrophes and quotes straight: linear time."""
    text = text.replace("\u2019", "'").replace("\u201c", '"').replace("\u201d", '"')
    return " ".join(text.split())


class TooMany(Exception):
    """One request lists more items than a message may ask for, or a sentence has too many parts."""

    def __init__(self, count: int, kind: str = "too_many") -> None:
        """Keep how many there were, and whether they were requests or parts (``too_long``)."""
        self.count = count
        self.kind = kind


@dataclass(frozen=True)
class Understanding:
    """A message read: its requests, or, when it makes none, the kind of talk it is."""

    intents: tuple[Intent, ...] = ()
    kind: str | None = None
    """With no request: greeting, thanks, goodbye, wellbeing, help, offtopic, unknown, too_many,
    too_long."""
    detail: str | None = None
    """For ``unknown``: the closest request keel knows; for ``too_many``: how many there were."""


def understand(message: str, tools: Sequence[BaseTool | Any]) -> Understanding:
    """What ``message`` asks of ``tools`` (see the module docstring)."""
    return _settled(message, declared(tools))


@functools.lru_cache(maxsize=256)
def _settled(message: str, tools: tuple[Declared, ...]) -> Understanding:
    """The decision table's reading settled with the learned model's (``nlu.settle``); of a
    message that opens with a topic phrase, the reading of what follows it, which names the new
    topic when it asks for nothing (``topic``).
    """  # noqa: D205
    if (rest := after_opening(message)) is not None:
        read = _settled(rest, tools) if rest else Understanding(kind="topic")
        if read.intents or read.kind in ("too_many", "too_long", "topic"):
            return read
        return Understanding(kind="topic", detail=_subject(rest))
    table = _understand(message, specs_of(tools))
    if table.kind in ("too_many", "too_long"):
        return table
    intents, kind, detail = settle(
        normalize(message), table.intents, table.kind, table.detail, tools
    )
    return Understanding(intents, kind, detail)


SUBJECT_CHARS = 60
"""The most of a new topic's words the offline reply names."""


def _subject(words: str) -> str:
    """``words`` cut to ``SUBJECT_CHARS`` at a word, for a reply to name."""
    if len(words) <= SUBJECT_CHARS:
        return words
    return words[:SUBJECT_CHARS].rsplit(" ", 1)[0] + "…"


@functools.lru_cache(maxsize=256)
def _understand(message: str, specs: tuple[tuple[str, ToolSpec], ...]) -> Understanding:
    table = table_of(specs)
    intents: list[Intent] = []
    last: tuple[str, list[Intent]] | None = None  # the sentence that asked last, and what
    sentences = _SENTENCE.split(message)
    if len(sentences) > SENTENCES_MAX:
        return Understanding(kind="too_long", detail=str(len(sentences)))
    for sentence in sentences:
        try:
            found = _requests(normalize(sentence), table)
        except TooMany as many:
            return Understanding(kind=many.kind, detail=str(len(intents) + many.count))
        if not found and last and len(last[0]) + len(sentence) <= MERGED_MAX_CHARS:
            merged = f"{last[0]} {sentence}"  # "Dr." ended no sentence: "add see Dr. Smith"
            again = _requests(normalize(merged), table)
            if len(again) == len(last[1]):
                intents[len(intents) - len(last[1]) :] = again
                last = (merged, again)
                continue
        intents += found
        last = (sentence, found) if found else None
        if len(intents) > MAX_REQUESTS:
            return Understanding(kind="too_many", detail=str(len(intents)))
    if intents:
        return Understanding(tuple(intents))
    from keel.tools.understanding.talk import (
        kind_of,  # talk reads the table too; imported here, not cyclic
    )

    kind, detail = kind_of(normalize(message), table)
    return Understanding(kind=kind, detail=detail)


def sure_request(message: str, tools: Sequence[BaseTool | Any]) -> bool:
    """``message`` makes a request of ``tools`` and the learned model is sure of it (a topic stays
    with a sure request: "Add buy milk"; "what other things do you like to do?" may move on).
    """  # noqa: D205
    if not understand(message, tools).intents:
        return False
    reading = reader_for(tools).read(normalize(message))
    return reading.label in {t.name for t in tools} and reading.confidence >= SURE


def likeliest(message: str, tools: Sequence[BaseTool | Any], second: bool = False) -> Intent | None:
    """The request the learned model reads ``message`` as, however unsure, when it names all its
    tool needs, else the decision table's one request (what a yes to "Did you mean to ...?"
    confirms); with ``second``, the model's runner-up ("the second" to "Did you mean to add a
    task ("eggs") or to list them?").
    """  # noqa: D205
    made = guess(normalize(message), declared(tools), second)
    if made is None and not second:  # the question was the table's reading, which the model doubted
        table = _understand(message, specs_of(tools)).intents
        made = table[0] if len(table) == 1 else None
    return made


def parse_intents(message: str, tools: Sequence[BaseTool | Any]) -> list[Intent]:
    """Every request in ``message`` that ``tools`` recognise, in order."""
    return list(understand(message, tools).intents)


def confirms(message: str) -> bool:
    """The message carries an explicit yes ("delete task 3, yes I'm sure")."""
    text = normalize(message)
    return confirms_in([text[a:b] for a, b in _pieces(text)], text)


def _requests(text: str, table: Table) -> list[Intent]:
    """The requests of one sentence: pieces that are no request of their own are glued onto the
    request before them; a glued list is then split into its items. A sentence that ends with a
    question mark asks: it reports nothing done and states nothing to add ("I should call mom,
    shouldn't I?"), though it may still request ("could you delete task 3?").
    """  # noqa: D205
    asked = text.rstrip().endswith("?")
    pieces = _pieces(text)
    if len(pieces) > PIECES_MAX:
        raise TooMany(len(pieces), "too_long")
    found: list[Intent] = []
    request: list[tuple[int, int]] = []  # runs of the request's words (an aside ends a run)
    asides: list[str] = []  # words said beside it: read with it, never a task of their own
    cut = False
    for a, b in pieces:
        piece = text[a:b]
        if is_confirmation(piece) or not any(c.isalnum() for c in piece):
            continue  # a yes, or punctuation: no request, and nothing to glue
        if request and ASIDE.match(piece.strip()):
            asides.append(piece.strip())  # "delete buy milk, it was a typo", "add x, it's urgent"
            cut = True
            continue
        if request and (_REF_ONLY.match(piece.strip()) or _one(piece, table, False, asked) is None):
            if BESIDE.match(piece.strip()):  # "scratch the rice, we still have some": no item
                asides.append(piece.strip())
                cut = True
            elif cut:
                request.append((a, b))
                cut = False
            else:
                request[-1] = (request[-1][0], b)
            continue
        if request:
            found += _said(text, request, asides, table, asked)
        request, asides, cut = [(a, b)], [], False
    if request:
        found += _said(text, request, asides, table, asked)
    return found


def _said(
    text: str, request: list[tuple[int, int]], asides: list[str], table: Table, asked: bool
) -> list[Intent]:
    """The intents of a request's runs of words, each with the asides said beside it in the words
    the model reads for their fields ("add renew passport, it's urgent": at the top); the table's
    arguments stay as they are.
    """  # noqa: D205
    words = ", ".join(text[a:b] for a, b in request)
    intents = _expanded(words, table, asked)
    aside = ", " + ", ".join(asides) if asides else ""
    return [replace(i, text=i.text + aside) for i in intents] if aside else intents


def _expanded(text: str, table: Table, asked: bool) -> list[Intent]:
    """The request ``text`` makes, one per item when it holds a list."""
    intent = _one(text, table, True, asked)
    if intent is None:
        return []
    if intent.ref is not None and not intent.args:
        refs = _items(intent.ref, always=True)
        if len(refs) > MAX_REQUESTS:
            raise TooMany(len(refs))
        if len(refs) > 1:  # each item's words are the request's, with the one item named
            items = [intent.with_ref(r) for r in refs]
            return [replace(i, text=intent.text.replace(intent.ref, i.ref or "")) for i in items]
        return [intent]
    title = intent.args.get("title")
    if isinstance(title, str) and "," in title and intent.ref is None and not _quoted(title, text):
        titles = _items(title, always=False)
        if len(titles) > MAX_REQUESTS:
            raise TooMany(len(titles))
        whole = intent.text
        return [
            replace(intent.with_args(title=t), text=whole.replace(title, t), listed_in=whole)
            for t in titles
        ]
    return [intent]


def _one(piece: str, table: Table, task_first: bool = True, asked: bool = False) -> Intent | None:
    """The request one piece makes, by the table, or as a report of a task done.

    In a question (``asked``) no phrasing that starts with the task is tried ("the milk is done?"),
    no deed is reported and nobody says what they are going to do ("I should ..., shouldn't I?").
    """
    text = strip_politeness(piece.strip().strip(".!?").strip())
    if not text:
        return None
    if asked and SELF.match(text):
        return None
    intent = match(text, table, task_first and not asked)
    if intent is None and (after := _AFTER.search(text)):  # "start fresh - delete all my todos"
        intent = match(text[after.end() :], table)
    if intent is not None and _makes(intent) and not _quoted(intent.args["title"], text):
        if REMARK.match(intent.args["title"]):
            return None  # "I have to go now", "I have to say, ..."
        inner = match(strip_politeness(intent.args["title"]), table)  # "I need to see my list"
        placed = set(intent.args) != {"title"}  # "put bin bags on the shopping list": a thing
        if (
            inner is not None
            and not placed
            and (_makes(inner) or inner.task_id is not None or inner.tool not in table.at_once)
        ):
            return inner  # a request of its own, unless it would act at once on words alone
    return intent or (None if asked else told_done(text, table))


def _makes(intent: Intent) -> bool:
    """The request makes a task: it gives a title and names none."""
    return intent.ref is None and "title" in intent.args
