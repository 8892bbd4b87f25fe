"""A task's fields beyond its title, each declared once: what is stored, asked, shown and read.

A ``TaskField`` (``keel.checkpoints.fields``) says everything keel needs to know about one field:
its columns in ``keel_tasks`` (``keel.checkpoints.tables`` adds them; a migration adds them to a
database), the tool argument that sets it (its type is the tools' and MCP's schema), how the words
a person gave become the stored values, how a task's stored values are given back (a tool's
result, the API's ``TaskOut``), how a task line shows it, and the tag the offline understanding
learns for its words. ``FIELDS``
is the one list: the store, the task lines and the understanding
(``keel.tools.understanding.nlu.data.SLOTS``) read it.

``due``: when a task is due, read from the person's words by ``keel.checkpoints.times`` in the
person's time zone. A day without a time of day is a day (``due_date``); a time of day makes it
a moment as well (``due_at``, UTC). Given back as ISO 8601 in the person's zone: "2026-12-04", or
"2026-12-04T17:00+01:00". ``repeat``: an RRULE and the words it was read from. ``list`` and
``place`` are declared in ``keel.checkpoints.list_fields``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date, datetime
from typing import Annotated, Any

import sqlalchemy as sa
from pydantic import Field

from keel.checkpoints.database import read_time
from keel.checkpoints.fields import TaskField, echoes
from keel.checkpoints.list_fields import LIST, PLACE
from keel.checkpoints.times import (
    DUE_WORDS_MAX_CHARS,
    REPEAT_WORDS_MAX_CHARS,
    When,
    day_words,
    read_due,
    read_repeat,
)

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
