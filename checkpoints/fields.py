"""What a task's field is: ``TaskField``, the declaration each field beyond a title makes once.

The fields themselves are declared in ``keel.checkpoints.task_fields`` (when a task is due, how
it repeats) and ``keel.checkpoints.list_fields`` (the list it is on, its place in it).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from keel.checkpoints.times import When


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


_NOT_SAID = frozenset({"list", "my", "the", "a", "an", "on", "at", "in", "of", "to", "every"})


def echoes(text: str, value: str) -> bool:
    """The message holds the value's words: one of them, or its first five letters ("grocery"
    for "groceries", "sundays" for "sunday"); a value of no such words counts as said.
    """  # noqa: D205
    words = [w for w in re.findall(r"[a-z0-9]+", value.casefold()) if w not in _NOT_SAID]
    said = text.casefold()
    return not words or any(re.search(rf"\b{re.escape(w[:5])}", said) for w in words)
