"""The list a task is on and its place in it, as task fields (``keel.checkpoints.fields``).

A list is a name ("shopping"), stored as people say it without "the", "my" or "list"; the todo
list is the one a task is on when nobody named one. A place is the top, the bottom or the n-th;
the store turns it into the task's order in its list.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any

import sqlalchemy as sa
from pydantic import Field

from keel.checkpoints.fields import TaskField, echoes
from keel.checkpoints.times import DUE_WORDS_MAX_CHARS, FieldError, When

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
