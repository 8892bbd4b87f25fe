"""Which of a user's tasks a listing reads, and in what order: the SQL the task store composes.

A listing is narrowed by status (open or completed), by a list (by its name), and by when tasks are
due (a day, a week, a month, or past their time): ``Filter`` turns those into one SQL condition and
its parameters. Tasks stand in their list's order (``position``, which a person sets: the top, the
bottom, the n-th); the todo list comes before the named ones; tasks asked for by when they are due
stand soonest first. The same on SQLite and PostgreSQL. Used by ``keel.tools.tasks.store``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime, time
from typing import Any

from keel.checkpoints.database import Database, Session
from keel.checkpoints.list_fields import BOTTOM, TODO_LIST, TOP
from keel.checkpoints.times import When, due_days

OVERDUE = " AND completed = :false AND (due_at < :now OR (due_at IS NULL AND due_date < :today))"
"""Open tasks past their moment, or past their day when they have no time of day."""
DUE_BETWEEN = (
    " AND ((due_at IS NULL AND due_date >= :due_from AND due_date < :due_to)"
    " OR (due_at >= :at_from AND due_at < :at_to))"
)
"""Tasks due on the days asked for: a day by its date, a moment by the user's days (in their zone
now, which need not be the zone it was set in)."""
OPEN_ONLY = " AND completed = :false"
BY_WHEN = "due_date, CASE WHEN due_at IS NULL THEN 0 ELSE 1 END, due_at, position, number"
"""Soonest first, a day before the moments on it, the same on SQLite and PostgreSQL (whose NULLs
sort the other way)."""
IN_ORDER = "CASE WHEN list_name = :todo THEN 0 ELSE 1 END, list_name, position, number"
"""The todo list first, then the named lists by name, each in its own order."""


@dataclass(frozen=True)
class Filter:
    """Which tasks a listing reads: ``done`` (completed only, open only, or both), ``list_name``
    (one list, or all), ``due`` (words of when, or "overdue").
    """  # noqa: D205

    done: bool | None = None
    list_name: str | None = None
    due: str | None = None

    async def sql(self, db: Database, when: When) -> tuple[str, dict[str, Any], str]:
        """The condition (after ``user_id = :user``), its parameters, and the order to read in.

        The words of ``due`` are read in a worker thread (dateparser is CPU work). Raises
        ``FieldError`` with a question.
        """
        where = "" if self.done is None else " AND completed = :done"
        params: dict[str, Any] = {"done": self.done, "todo": TODO_LIST, "false": False}
        if self.list_name is not None:
            where += " AND list_name = :list_name"
            params["list_name"] = self.list_name
        if self.due is None or not str(self.due).strip():
            return where, params, IN_ORDER
        days = await asyncio.to_thread(due_days, self.due, when)
        if days is None:
            params.update(now=db.time(when.now), today=when.today.isoformat())
            return where + OVERDUE, params, BY_WHEN
        first, after = days
        start, end = (datetime.combine(d, time(), when.zone) for d in (first, after))
        params.update(
            due_from=first.isoformat(),
            due_to=after.isoformat(),
            at_from=db.time(start),
            at_to=db.time(end),
        )
        return where + DUE_BETWEEN + (OPEN_ONLY if self.done is None else ""), params, BY_WHEN


async def placed(
    tx: Session, user_id: str, list_name: str, place: int | None, moving: int | None = None
) -> int:
    """The ``position`` that puts a task at ``place`` in the list ``list_name`` (1 the top, -1 or
    None the bottom, n the n-th), making room there; ``moving``: the number of a task already on
    the list, which is not counted.
    """  # noqa: D205
    params = {"user": user_id, "list_name": list_name, "moving": moving or 0}
    others = "user_id = :user AND list_name = :list_name AND number <> :moving"
    if place is None or place == BOTTOM:
        row = await tx.fetchone(
            f"SELECT COALESCE(MAX(position), 0) + 1 AS p FROM keel_tasks WHERE {others}", params
        )
        return int(row["p"]) if row else 1
    if place == TOP:
        row = await tx.fetchone(
            f"SELECT COALESCE(MIN(position), 2) - 1 AS p FROM keel_tasks WHERE {others}", params
        )
        return int(row["p"]) if row else 1
    row = await tx.fetchone(
        f"SELECT position FROM keel_tasks WHERE {others} ORDER BY position, number "
        "LIMIT 1 OFFSET :skip",
        {**params, "skip": place - 1},
    )
    if row is None:  # past the end: the bottom
        return await placed(tx, user_id, list_name, BOTTOM, moving)
    at = int(row["position"])
    await tx.execute(
        f"UPDATE keel_tasks SET position = position + 1 WHERE {others} AND position >= :at",
        {**params, "at": at},
    )
    return at


async def standing(
    tx: Session, user_id: str, list_name: str, position: int, number: int
) -> dict[str, int]:
    """Where the task ``number`` at ``position`` stands in the list ``list_name``: its place (1
    the top) and how many tasks the list holds.
    """  # noqa: D205
    row = await tx.fetchone(
        "SELECT COUNT(*) AS n, SUM(CASE WHEN position < :position OR (position = :position "
        "AND number < :id) THEN 1 ELSE 0 END) AS above FROM keel_tasks "
        "WHERE user_id = :user AND list_name = :list_name",
        {"user": user_id, "list_name": list_name, "position": position, "id": number},
    )
    return {"place": int(row["above"] or 0) + 1 if row else 1, "of": int(row["n"]) if row else 1}
