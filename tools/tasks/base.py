"""What every operation of the task store stands on: one user's rows, a time zone, a session.

``StoreBase`` holds the database, the clock, the transaction a call works in and the time zone
dates are read in; it reads a task's fields from words, and gets, changes and gives back one task.
``keel.tools.tasks.store.TaskStore`` builds the operations on it.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any, Self
from zoneinfo import ZoneInfo

from keel.checkpoints.clock import Clock, utcnow
from keel.checkpoints.database import Database, Row, Session
from keel.checkpoints.task_fields import FIELDS
from keel.checkpoints.times import FieldError, When, next_time, zone_named
from keel.tools.tasks.rows import FIELD_COLUMNS, RETURNING, TaskError, check_id, task_of

REMINDERS_MAX = 500
"""Reminders to come a user holds at most, unless set otherwise (``KEEL_REMINDERS_PER_USER``)."""


class StoreBase:
    """The database session, clock and time zone of a task store; one task at a time."""

    def __init__(
        self,
        db: Database,
        clock: Clock = utcnow,
        tx: Session | None = None,
        zone: ZoneInfo | None = None,
        conversation: str | None = None,
        reminders_max: int = REMINDERS_MAX,
    ) -> None:
        """Work on the app tables of ``db`` (inside the transaction ``tx`` when given).

        Rows are stamped with ``clock``; dates are read and given back in the time ``zone``. A
        time set from a ``conversation`` is reminded there (``keel.checkpoints.reminders``); a
        user holds ``reminders_max`` reminders to come at most.
        """
        self.db = db
        self.clock = clock
        self.session: Session = tx or db
        self.zone = zone or ZoneInfo("UTC")
        self.conversation = conversation
        self.reminders_max = reminders_max

    def _with(self, **changed: Any) -> Self:
        """The same store with ``changed`` attributes."""
        other = copy.copy(self)
        other.__dict__.update(changed)
        return other

    def within(self, tx: Session) -> Self:
        """The same store, working inside the caller's transaction ``tx``."""
        return self._with(session=tx)

    def about(self, conversation: str | None) -> Self:
        """The same store, for a person speaking in ``conversation``: the times they set are
        reminded there.
        """  # noqa: D205
        return self._with(conversation=conversation)

    def in_zone(self, name: str | None) -> Self:
        """The same store, reading and giving back dates in the time zone ``name``."""
        try:
            zone = zone_named(name)
        except FieldError as exc:
            raise TaskError(exc.code, exc.message) from None
        return self if zone == self.zone else self._with(zone=zone)

    def when(self) -> When:
        """The user's time zone and the present moment, as dates are read."""
        return When(self.zone, self.clock())

    def _row(self, row: Row) -> dict[str, Any]:
        return task_of(row, self.when())

    async def _fields(self, given: dict[str, Any], every: bool = False) -> dict[str, Any]:
        """The column values of each field given in words (None: left unset; with ``every``,
        each field not given is read from no words: no date, the todo list, the bottom).

        Words are read in a worker thread: reading a date is CPU work, and the first one loads
        dateparser's language data from its files.
        """  # noqa: D205
        unknown = set(given) - {f.name for f in FIELDS}
        if unknown:
            raise TaskError("invalid_field", f"A task has no field {sorted(unknown)[0]!r}.")
        values: dict[str, Any] = {c: None for c in FIELD_COLUMNS}
        when = self.when()
        for field in FIELDS:
            words = given.get(field.name)
            if words is None and every:
                words = ""
            if words is None:
                continue
            try:
                values.update(await asyncio.to_thread(field.read, str(words), when))
            except FieldError as exc:
                raise TaskError(exc.code, exc.message) from None
        if values.get("repeat_rule") and not given.get("due"):  # due at its first time
            day, moment = next_time(values["repeat_rule"], when.now, self.zone, inclusive=True)
            values.update(due_date=day.isoformat(), due_at=moment)
        if every or "due" in given or "repeat" in given:
            values.update(self.reminding(values["due_at"]))
        return self._params(values)

    def _params(self, values: dict[str, Any]) -> dict[str, Any]:
        return {name: self._param(value) for name, value in values.items()}

    def reminding(self, due_at: datetime | None) -> dict[str, Any]:
        """The reminder a task due at ``due_at`` gets: at that moment when it is still to come,
        in the conversation this store speaks for (none without a time, or for a time past).
        """  # noqa: D205
        upcoming = due_at is not None and due_at > self.clock()
        return {"remind_at": due_at if upcoming else None, "remind_in": self.conversation}

    def _param(self, value: Any) -> Any:
        return self.db.time(value) if isinstance(value, datetime) else value

    async def _room_to_remind(self, user_id: str, values: dict[str, Any], task_id: int = 0) -> None:
        """Raise ``TaskError('too_many_reminders')`` when ``values`` set a reminder and the user
        holds ``reminders_max`` to come already (``task_id``'s own not counted).
        """  # noqa: D205
        if values.get("remind_at") is None:
            return
        row = await self.session.fetchone(
            "SELECT count(*) AS n FROM keel_tasks WHERE user_id = :user AND remind_at IS NOT NULL "
            "AND completed = :false AND number <> :id",
            {"user": user_id, "false": False, "id": task_id},
        )
        if row is not None and int(row["n"]) >= self.reminders_max:
            raise TaskError(
                "too_many_reminders",
                f"You have {self.reminders_max} reminders to come, the most I keep: complete or "
                "move some first, or say it without a time of day.",
            )

    @asynccontextmanager
    async def _tx(self) -> AsyncIterator[Session]:
        """The caller's transaction, or a new one."""
        if self.session is not self.db:
            yield self.session
            return
        async with self.db.transaction() as tx:
            yield tx

    async def get(self, user_id: str, task_id: int) -> dict[str, Any]:
        """Return one task, or raise ``TaskError('not_found')``."""
        task_id = check_id(task_id)
        row = await self.session.fetchone(
            "SELECT * FROM keel_tasks WHERE number = :id AND user_id = :user",
            {"id": task_id, "user": user_id},
        )
        if row is None:
            raise TaskError("not_found", f"Task {task_id} not found.")
        return self._row(row)

    async def _change(self, sql: str, user_id: str, task_id: int, **values: Any) -> dict[str, Any]:
        task_id = check_id(task_id)
        params = {"id": task_id, "user": user_id, **values}
        row = await self.session.fetchone(
            f"{sql} WHERE number = :id AND user_id = :user {RETURNING}", params
        )
        if row is None:
            raise TaskError("not_found", f"Task {task_id} not found.")
        return self._row(row)

    def _now(self) -> Any:
        return self.db.time(self.clock())
