"""A task's fields beyond its title, each declared once: what is stored, asked, shown and read.

A ``TaskField`` says everything keel needs to know about one field: its columns in ``keel_tasks``
(``keel.checkpoints.tables`` adds them; a migration adds them to a database), the tool argument
that sets it (its type is the tools' and MCP's schema), how the words a person gave become the
stored values, how a task's stored values are given back (a tool's result, the API's ``TaskOut``),
how a task line shows it, and the tag the offline understanding learns for its words. ``FIELDS``
is the one list: the store, the task lines and the understanding
(``keel.tools.understanding.nlu.data.SLOTS``) read it.

``due``: when a task is due, read from the person's words by ``keel.checkpoints.times`` in the
person's time zone. A day without a time of day is a day (``due_date``); a time of day makes it
a moment as well (``due_at``, UTC). Given back as ISO 8601 in the person's zone: "2026-12-04", or
"2026-12-04T17:00+01:00". ``repeat``: an RRULE and the words it was read from. ``list`` and
``place`` are read here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Annotated, Any

import sqlalchemy as sa
from pydantic import Field

from keel.checkpoints.database import read_time
from keel.checkpoints.times import (
    DUE_WORDS_MAX_CHARS,
    REPEAT_WORDS_MAX_CHARS,
    FieldError,
    When,
    day_words,
    read_due,
    read_repeat,
)


@dataclass(frozen=True)
class TaskField:
    """One field of a task, declared once."""

    name: str
    """The tool argument and the key in a task as keel gives it back."""
    columns: Callable[[], tuple[sa.Column[Any], ...]]
    """Its columns in ``keel_tasks`` (made anew for each table that holds them)."""
    argument: Any
    """The tool argument's type (``Annotated``, with its description): the tools' schemas."""
    read: Callable[[str, When], dict[str, Any]]
    """A person's words as the values of its columns; raises ``FieldError`` with a question."""
    given: Callable[[Mapping[str, Any], When], dict[str, Any]]
    """A stored row's columns as what a task gives back (``due``, and whether it is overdue)."""
    shown: Callable[[Mapping[str, Any]], str]
    """A task's field as words in a task line ("due Fri 4 Dec 2026 17:00"; empty: none)."""
    tag: str
    """The tag the offline understanding learns for the field's words in a request."""
    mentioned: Callable[[str], bool]
    """Whether a person's message has a word of the field's kind (a word of when, "list", a
    place, a word of how often): a small model is shown the argument only then
    (``keel.nodes.models.declared``)."""
    said: Callable[[str, str], bool]
    """Whether a person's message says anything of the field, for a model's value of it (the
    message, the value): liberal, so a value is dropped only where the message has no word
    of the kind at all (a date, a list's name, a place, a repeat that a small model made up)."""


# --- due --------------------------------------------------------------------------------------


def _given_due(row: Mapping[str, Any], when: When) -> dict[str, Any]:
    still_open = not row.get("completed")
    if row.get("due_at"):
        moment = read_time(row["due_at"])
        try:
            moment = moment.astimezone(when.zone)
        except OverflowError:  # a moment at the edge of time, stored before it was bounded
            pass
        late = still_open and moment < when.now
        return {"due": moment.isoformat(timespec="minutes"), "overdue": late}
    day = row.get("due_date")
    if day is None:
        return {"due": None, "overdue": False}
    day = day if isinstance(day, date) else date.fromisoformat(str(day)[:10])
    return {"due": day.isoformat(), "overdue": still_open and day < when.today}


def _shown_due(task: Mapping[str, Any]) -> str:
    value = task.get("due")
    if not value:
        return ""
    if "T" in value:
        moment = datetime.fromisoformat(value)
        words = f"{day_words(moment.date())} {moment:%H:%M}"
    else:
        words = day_words(date.fromisoformat(value))
    return f"overdue since {words}" if task.get("overdue") else f"due {words}"


_NOT_SAID = frozenset({"list", "my", "the", "a", "an", "on", "at", "in", "of", "to", "every"})


def echoes(text: str, value: str) -> bool:
    """The message holds the value's words: one of them, or its first five letters ("grocery"
    for "groceries", "sundays" for "sunday"); a value of no such words counts as said.
    """  # noqa: D205
    words = [w for w in re.findall(r"[a-z0-9]+", value.casefold()) if w not in _NOT_SAID]
    said = text.casefold()
    return not words or any(re.search(rf"\b{re.escape(w[:5])}", said) for w in words)


_BARE_NUMBERS = re.compile(
    r"#?\b\d+\b(?![:/.]\d|\s*(?:am|pm|h|hrs?|hours?|min|mins|minutes?)\b)", re.I
)
"""Numbers on their own ("task 3", "#2", "mark 3 done"): a task's number, no date. "5pm", "17:30",
"12/4" and "in 10 minutes" stay."""

_TIME_WORDS = re.compile(
    r"\d|\b(?:today|tonight|tomorrow|tmrw|yesterday|now|soon|later|morning|afternoon|evening"
    r"|night|noon|midday|midnight|week|weekend|month|year|day|days|hours?|hrs?|minutes?|mins?"
    r"|next|this|due|by|until|till|before|after|deadline|eod|asap|am|pm|o'?clock|overdue"
    r"|late|missed|past|behind|upcoming"
    r"|mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun|(?:mon|tues|wednes|thurs|fri|satur|sun)day"
    r"|jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|january|february|march|april|june"
    r"|july|august|september|october|november|december)\b",
    re.I,
)
"""Words that say when (any of them, or a digit): a message without one gave no date."""


DUE = TaskField(
    name="due",
    columns=lambda: (
        sa.Column("due_date", sa.Date, nullable=True),
        sa.Column("due_at", sa.DateTime(timezone=True), nullable=True),
    ),
    argument=Annotated[
        str | None,
        Field(
            description='When the task is due, in the user\'s own words ("friday", '
            '"tomorrow at 5pm", "in 45 minutes"), read in their time zone. Leave the date '
            "words out of the title.",
        ),
    ],
    read=read_due,
    given=_given_due,
    shown=_shown_due,
    tag="due",
    mentioned=lambda text: bool(_TIME_WORDS.search(_BARE_NUMBERS.sub(" ", text))),
    said=lambda text, value: bool(_TIME_WORDS.search(text)) or echoes(text, value),
)

# --- list -------------------------------------------------------------------------------------


TODO_LIST = "todo"
"""The list a task is on when nobody named one ("my todo list")."""
LIST_NAME_MAX_CHARS = 40
_LIST_WORDS = re.compile(
    r"^(?:(?:the|my|our|a|an|new|whole|entire|full|current|complete)\s+)+|\s+list$"
    r"|^list\s+(?:for|of)\s+",
    re.I,
)
"""Words around a list's name that are no part of it ("my shopping list": "shopping")."""
TODO_NAMES = frozenset(
    {"todo", "to do", "to-do", "todos", "to dos", "to-dos", "task", "tasks", "whole", "entire"}
)
"""What people call the todo list."""


def list_name(words: str) -> str:
    """The name of the list ``words`` name, as it is stored: lower case, without "the", "my" or
    "list" ("My Shopping List": "shopping"); the todo list for its own names or none. Raises
    ``FieldError``.
    """  # noqa: D205
    said = " ".join(str(words).replace("\u2019", "'").split())
    if said and not any(c.isalnum() for c in said):
        raise FieldError("invalid_list", f"“{said[:60]}” is not a list name I can keep.")
    text = said.strip(" '\".,!?")
    for _ in range(3):
        text = _LIST_WORDS.sub("", text).strip()
    name = text.casefold()
    if not name or name in TODO_NAMES or name == "list":
        return TODO_LIST
    if len(name) > LIST_NAME_MAX_CHARS or not any(c.isalnum() for c in name):
        raise FieldError(
            "invalid_list", f"“{text[:60]}” is not a list name I can keep: say a short name."
        )
    return name


def _given_list(row: Mapping[str, Any], when: When) -> dict[str, Any]:
    return {"list": row.get("list_name") or TODO_LIST}


def _shown_list(task: Mapping[str, Any]) -> str:
    name = task.get("list") or TODO_LIST
    return "" if name == TODO_LIST else f"{name} list"


_A_LIST = re.compile(
    r"\b(?!(?:my|the|your|our|a|this|that|to|todo|whole|entire|full|task)\b)[\w'-]+\s+lists?\b"
    r"|\blists\b",
    re.I,
)
"""A list named by its name ("my shopping list", "the hardware list") or lists spoken of: a
message without one named no list ("what's on my list?" is the todo list)."""

LIST = TaskField(
    name="list",
    columns=lambda: (
        sa.Column(
            "list_name", sa.String(LIST_NAME_MAX_CHARS), nullable=False, server_default=TODO_LIST
        ),
    ),  # fmt: skip
    argument=Annotated[
        str | None,
        Field(
            max_length=DUE_WORDS_MAX_CHARS,
            description='The list the task is on, by its name ("shopping", "hardware"); none: '
            "the user's todo list. A list begins when a task is put on it.",
        ),
    ],
    read=lambda words, when: {"list_name": list_name(words)},
    given=_given_list,
    shown=_shown_list,
    tag="list",
    mentioned=lambda text: bool(_A_LIST.search(text)),
    said=lambda text, value: echoes(text, value),
)


# --- place ------------------------------------------------------------------------------------

TOP, BOTTOM = 1, -1
"""Places as ``read_place`` gives them: the first of a list, and the last."""
_PLACES = {
    "top": TOP, "first": TOP, "start": TOP, "beginning": TOP, "front": TOP, "head": TOP,
    "urgent": TOP, "priority": TOP, "asap": TOP, "important": TOP,
    "bottom": BOTTOM, "last": BOTTOM, "end": BOTTOM, "back": BOTTOM,
}  # fmt: skip
_ORDINALS = {
    "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4, "fifth": 5, "5th": 5,
    "sixth": 6, "6th": 6, "seventh": 7, "7th": 7, "eighth": 8, "8th": 8, "ninth": 9, "9th": 9,
    "tenth": 10, "10th": 10,
}  # fmt: skip
PLACE_MAX = 10_000
_NAMED_PLACES = frozenset(_PLACES) | frozenset(_ORDINALS)
"""Words that name a place in a list ("top", "second")."""
_PLACE_WORDS = _NAMED_PLACES | {"up", "down", "above", "below"}
"""Words that say where in a list (any of them, or a digit)."""


def read_place(words: str, when: When | None = None) -> dict[str, Any]:
    """Where in its list a task goes, from words: ``position`` 1 for the top ("at the top",
    "first", "urgent"), -1 for the bottom ("last", "at the end"), n for the n-th ("second",
    "3"); empty words: none. Raises ``FieldError`` with a question.
    """  # noqa: D205
    text = " ".join(str(words).casefold().split()).strip(" .!?")
    if not text:
        return {"position": None}
    found = [_PLACES.get(w) or _ORDINALS.get(w) for w in re.findall(r"[a-z0-9]+", text)]
    numbers = [int(n) for n in re.findall(r"\b\d+\b", text)]
    place = next((p for p in found if p is not None), None)
    if place is None and numbers and 1 <= numbers[0] <= PLACE_MAX:
        place = numbers[0]
    if place is None:
        raise FieldError(
            "unclear_place",
            f"Where in the list do you mean by “{text[:60]}”? Say the top, the bottom, or a "
            "place (“second”).",
        )
    return {"position": place}


def _a_place(text: str) -> bool:
    return bool(_PLACE_WORDS & set(re.findall(r"[a-z0-9]+", text.casefold()))) or bool(
        re.search(r"\d", text)
    )


PLACE = TaskField(
    name="place",
    columns=lambda: (sa.Column("position", sa.BigInteger, nullable=False, server_default="0"),),
    argument=Annotated[
        str | None,
        Field(
            max_length=DUE_WORDS_MAX_CHARS,
            description='Where in its list the task goes: "top" (also for urgent), "bottom", or '
            'a place ("second", "3"). None: the bottom.',
        ),
    ],
    read=read_place,
    given=lambda row, when: {},
    shown=lambda task: "",
    tag="place",
    mentioned=lambda text: bool(_NAMED_PLACES & set(re.findall(r"[a-z0-9]+", text.casefold()))),
    said=lambda text, value: _a_place(text),
)
"""A task's place in its list. Its column is an order, not a place: the store turns the place
asked for into one (``keel.tools.tasks.store``), and lists tasks in it."""


# --- repeat -----------------------------------------------------------------------------------


_REPEAT_WORDS = re.compile(
    r"\b(?:every|each|daily|weekly|monthly|yearly|annually|weekdays|weekends|hourly|nightly"
    r"|biweekly|fortnightly|repeat\w*|recurr\w*|again)\b",
    re.I,
)
"""Words that say how often (any of them)."""


def _given_repeat(row: Mapping[str, Any], when: When) -> dict[str, Any]:
    return {"repeat": row.get("repeat_words") or None}


REPEAT = TaskField(
    name="repeat",
    columns=lambda: (
        sa.Column("repeat_rule", sa.String(200), nullable=True),
        sa.Column("repeat_words", sa.String(REPEAT_WORDS_MAX_CHARS), nullable=True),
    ),
    argument=Annotated[
        str | None,
        Field(
            max_length=REPEAT_WORDS_MAX_CHARS,
            description='How often the task repeats, in the user\'s words ("every monday", '
            '"every other week", "daily at 9am"). Completing it moves it to its next time.',
        ),
    ],
    read=read_repeat,
    given=_given_repeat,
    shown=lambda task: f"repeats {task['repeat']}" if task.get("repeat") else "",
    tag="repeat",
    mentioned=lambda text: bool(_REPEAT_WORDS.search(text)),
    said=lambda text, value: bool(_REPEAT_WORDS.search(text)) or echoes(text, value),
)


FIELDS: tuple[TaskField, ...] = (LIST, PLACE, DUE, REPEAT)
"""The one list of a task's fields beyond its title."""
FIELD_NAMED = {f.name: f for f in FIELDS}
COLUMNS = frozenset(c.name for f in FIELDS for c in f.columns())
"""The columns the fields keep."""

Due = DUE.argument
"""The ``due`` argument of the tools that set it."""
ListName = LIST.argument
"""The ``list`` argument of the tools that put a task on a list, or read one."""
Place = PLACE.argument
"""The ``place`` argument of the tools that put a task in its list."""
Repeat = REPEAT.argument
"""The ``repeat`` argument of the tools that make a task repeat."""
DueFilter = Annotated[
    str | None,
    Field(
        max_length=DUE_WORDS_MAX_CHARS,
        description='Only the open tasks due then: a day ("today", "tomorrow", "friday"), a '
        'week ("this week"), a month, or "overdue" for those past their time.',
    ),
]
