"""A task as the store keeps it: the checks its values pass, its row as given back, its INSERT.

The statements number and write a new task. ``TaskError`` is what the store raises for bad
arguments: a code and a message meant to be shown to the user as it is. Used by
``keel.tools.tasks.store``, the only code that reads or writes tasks.
"""

from __future__ import annotations

import re
from datetime import date, datetime, time
from typing import Any
from zoneinfo import ZoneInfo

from keel.checkpoints.database import Row, read_time
from keel.checkpoints.task_fields import COLUMNS, FIELDS
from keel.checkpoints.text_rules import UnstorableText, one_line
from keel.checkpoints.times import When

TITLE_MAX_CHARS = 500


class TaskError(Exception):
    """A task operation refused, with a stable code and a readable message."""

    def __init__(self, code: str, message: str) -> None:
        """Keep the code for callers and the message for people."""
        super().__init__(message)
        self.code = code
        self.message = message


def clean_title(title: Any) -> str:
    """The title as it is stored: on one line, without control characters (``one_line``)."""
    if not isinstance(title, str):
        raise TaskError("invalid_title", "A task title cannot be empty.")
    try:
        title = one_line(title)
    except UnstorableText as exc:
        raise TaskError("invalid_title", f"A task title {exc}.") from None
    if not title:
        raise TaskError("invalid_title", "A task title cannot be empty.")
    if len(title) > TITLE_MAX_CHARS:
        raise TaskError(
            "invalid_title",
            f"A task title can be at most {TITLE_MAX_CHARS} characters (got {len(title)}).",
        )
    return title


MAX_TASK_ID = 2**63 - 1
"""The largest id a task can have (a signed 64-bit column); a larger one names no task."""


def check_id(task_id: Any) -> int:
    """``task_id`` when it can name a task; raises ``TaskError`` (one past every id: not found)."""
    if isinstance(task_id, bool) or not isinstance(task_id, int) or task_id < 1:
        raise TaskError(
            "invalid_task_id", f"Task id must be a positive whole number, not {task_id!r}."
        )
    if task_id > MAX_TASK_ID:
        raise TaskError("not_found", f"Task {task_id} not found.")
    return task_id


Tasks = list[dict[str, Any]]
"""Tasks as the store returns them (``TaskStore.list`` would shadow ``list`` in the class)."""
FIND_BATCH = 1000
"""Tasks read per query while ``TaskStore.find`` scans a user's titles."""


def check_page(offset: Any, limit: Any) -> tuple[int, int | None]:
    """A page's ``offset`` (0 or more) and ``limit`` (1 or more, or None for all)."""
    if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset <= MAX_TASK_ID:
        raise TaskError("invalid_page", f"offset must be a whole number from 0, not {offset!r}.")
    if limit is not None and (
        isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_TASK_ID
    ):
        raise TaskError("invalid_page", f"limit must be a whole number from 1, not {limit!r}.")
    return offset, limit


KEPT_COLUMNS = frozenset(
    {
        "id", "user_id", "number", "title", "completed", "created_at", "updated_at",
        "remind_at", "remind_in",
    }
)  # fmt: skip
"""The columns every task has. Any other column of ``keel_tasks`` is an attribute that a tool
stores on tasks (its migration adds the column): read as stored, and set with ``set_attributes``."""
ATTRIBUTE_NAME = re.compile(r"[a-z][a-z0-9_]{0,62}")


def due_moment(due: str | None, zone: ZoneInfo) -> datetime | None:
    """A task's ``due`` as it gives it back, as a moment: a day counts from its end."""
    if not due:
        return None
    if "T" in due:
        return datetime.fromisoformat(due)
    day = date.fromisoformat(due)
    return datetime.combine(day, time(23, 59), zone)


def task_of(row: Row, when: When) -> dict[str, Any]:
    """A stored row as keel gives a task back: its fields read in ``when``'s zone, and the
    attributes extra tools keep.
    """  # noqa: D205
    task = {
        "id": row["number"],
        "title": row["title"],
        "completed": bool(row["completed"]),
        "created_at": read_time(row["created_at"]).isoformat() if row["created_at"] else None,
    }
    for field in FIELDS:
        task.update(field.given(row, when))
    for name, value in row.items():
        if name not in KEPT_COLUMNS and name not in COLUMNS:
            task[name] = value.isoformat() if isinstance(value, date | datetime) else value
    return task


RETURNING = "RETURNING *"
NEXT_NUMBER = (
    "INSERT INTO keel_task_counters (user_id, last_number) VALUES (:user, 1) "
    "ON CONFLICT (user_id) DO UPDATE SET last_number = keel_task_counters.last_number + 1 "
    "RETURNING last_number"
)
"""The user's next task number; the counter row's lock makes concurrent creates take turns."""
FIELD_COLUMNS = sorted(COLUMNS)
_INTO = ", ".join(
    [
        "user_id",
        "number",
        "title",
        "completed",
        "created_at",
        "updated_at",
        "remind_at",
        "remind_in",
    ]
)
_FIELDS_INTO = "".join(f", {c}" for c in FIELD_COLUMNS)
AT_BOTTOM = (
    "COALESCE(CAST(:position AS BIGINT), (SELECT COALESCE(MAX(position), 0) + 1 FROM keel_tasks "
    "WHERE user_id = :user AND list_name = :list_of))"
)
"""A new task's place: the one asked for, else after its list's last (in the same statement)."""
_FIELDS_VALUES = "".join(f", {AT_BOTTOM}" if c == "position" else f", :{c}" for c in FIELD_COLUMNS)
CREATE = (
    f"INSERT INTO keel_tasks ({_INTO}{_FIELDS_INTO}) "
    f"VALUES (:user, :number, :title, :false, :now, :now, :remind_at, :remind_in"
    f"{_FIELDS_VALUES}) {RETURNING}"
)
CREATE_NUMBERED = (
    f"WITH next AS ({NEXT_NUMBER}) "
    f"INSERT INTO keel_tasks ({_INTO}{_FIELDS_INTO}) "
    f"SELECT :user, last_number, :title, :false, :now, :now, :remind_at, :remind_in"
    f"{_FIELDS_VALUES} FROM next {RETURNING}"
)
"""Both in one statement (PostgreSQL, whose CTEs may write)."""
IN_LIST = "user_id = :user AND list_name = :list_name"
"""The user's tasks on one list."""
