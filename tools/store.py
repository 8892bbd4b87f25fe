"""The todo task store: the only code that reads or writes tasks.

Every method takes the acting ``user_id`` and touches only that user's rows: another user's task
answers exactly like a missing one. Bad arguments raise ``TaskError`` with a code and a message
meant to be shown to the user as it is. The agent never calls this directly; the tools do.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from checkpoints.schema import tasks

TITLE_MAX_CHARS = 500


class TaskError(Exception):
    """A task operation refused, with a stable code and a readable message."""

    def __init__(self, code: str, message: str) -> None:
        """Keep the code for callers and the message for people."""
        super().__init__(message)
        self.code = code
        self.message = message


def _clean_title(title: Any) -> str:
    if not isinstance(title, str) or not title.strip():
        raise TaskError("invalid_title", "A task title cannot be empty.")
    title = " ".join(title.split())
    if len(title) > TITLE_MAX_CHARS:
        raise TaskError(
            "invalid_title",
            f"A task title can be at most {TITLE_MAX_CHARS} characters (got {len(title)}).",
        )
    return title


def _check_id(task_id: Any) -> int:
    if isinstance(task_id, bool) or not isinstance(task_id, int) or task_id < 1:
        raise TaskError(
            "invalid_task_id", f"Task id must be a positive whole number, not {task_id!r}."
        )
    return task_id


def _row(row: sa.Row[Any]) -> dict[str, Any]:
    return {
        "id": row.id,
        "title": row.title,
        "completed": bool(row.completed),
        "created_at": row.created_at.isoformat() if row.created_at else None,
    }


class TaskStore:
    """CRUD on ``keel_tasks``, scoped to one user per call."""

    def __init__(self, engine: AsyncEngine, conn: AsyncConnection | None = None) -> None:
        """Work on the app tables of ``engine`` (inside ``conn``'s transaction when given)."""
        self.engine = engine
        self.conn = conn

    def within(self, conn: AsyncConnection) -> TaskStore:
        """The same store, working inside the caller's transaction ``conn``."""
        return TaskStore(self.engine, conn)

    @asynccontextmanager
    async def _tx(self) -> AsyncIterator[AsyncConnection]:
        if self.conn is not None:
            yield self.conn
            return
        async with self.engine.begin() as conn:
            yield conn

    async def create(self, user_id: str, title: str) -> dict[str, Any]:
        """Create a task and return it."""
        title = _clean_title(title)
        now = datetime.now(UTC)
        async with self._tx() as conn:
            result = await conn.execute(
                tasks.insert()
                .values(
                    user_id=user_id, title=title, completed=False, created_at=now, updated_at=now
                )
                .returning(*tasks.c)
            )
            return _row(result.one())

    async def get(self, user_id: str, task_id: int) -> dict[str, Any]:
        """Return one task, or raise ``TaskError('not_found')``."""
        task_id = _check_id(task_id)
        async with self._tx() as conn:
            result = await conn.execute(
                sa.select(tasks).where(tasks.c.id == task_id, tasks.c.user_id == user_id)
            )
            row = result.one_or_none()
        if row is None:
            raise TaskError("not_found", f"Task {task_id} not found.")
        return _row(row)

    async def list(self, user_id: str) -> list[dict[str, Any]]:
        """Return the user's tasks, oldest first."""
        async with self._tx() as conn:
            result = await conn.execute(
                sa.select(tasks).where(tasks.c.user_id == user_id).order_by(tasks.c.id)
            )
            return [_row(r) for r in result]

    async def _update(self, user_id: str, task_id: int, **values: Any) -> dict[str, Any]:
        task_id = _check_id(task_id)
        async with self._tx() as conn:
            result = await conn.execute(
                tasks.update()
                .where(tasks.c.id == task_id, tasks.c.user_id == user_id)
                .values(updated_at=datetime.now(UTC), **values)
                .returning(*tasks.c)
            )
            row = result.one_or_none()
        if row is None:
            raise TaskError("not_found", f"Task {task_id} not found.")
        return _row(row)

    async def rename(self, user_id: str, task_id: int, title: str) -> dict[str, Any]:
        """Give a task a new title and return it."""
        return await self._update(user_id, task_id, title=_clean_title(title))

    async def complete(self, user_id: str, task_id: int) -> dict[str, Any]:
        """Mark a task completed and return it."""
        return await self._update(user_id, task_id, completed=True)

    async def delete(self, user_id: str, task_id: int) -> dict[str, Any]:
        """Delete a task and return what it was."""
        task_id = _check_id(task_id)
        async with self._tx() as conn:
            result = await conn.execute(
                tasks.delete()
                .where(tasks.c.id == task_id, tasks.c.user_id == user_id)
                .returning(*tasks.c)
            )
            row = result.one_or_none()
        if row is None:
            raise TaskError("not_found", f"Task {task_id} not found.")
        return _row(row)
