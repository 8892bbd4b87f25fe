"""Reminders in the database: the times that fell due, taken once, and their deliveries.

A task with a time of day is reminded at it: the task store sets ``keel_tasks.remind_at`` when a
time is set (and clears it when the task is done), with the conversation that set it
(``remind_in``). The database is the clock's only keeper:

1. ``take_due`` moves the tasks whose time has come into ``keel_reminders``, one row per task and
   time, and clears their ``remind_at``, in one transaction. On PostgreSQL the tasks are locked
   ``FOR UPDATE SKIP LOCKED``, so processes taking at once each take other tasks; on SQLite the
   transaction holds the database's write lock. A task is taken once.
2. ``lease`` hands a process the reminders waiting for delivery, each for ``lease_seconds``: a
   process that dies mid-delivery leaves its reminders to be leased again when the lease ends.
3. ``delivered`` (or ``dropped``: the task was done or deleted first) ends a reminder; ``failed``
   leases it again after a backoff. The delivery itself runs under the reminder's id as its
   idempotency key, so a reminder delivered again after a crash is answered, never doubled.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from keel.checkpoints.clock import Clock, utcnow
from keel.checkpoints.database import Database, Row, read_time

BACKOFF_SECONDS = (2.0, 5.0, 15.0, 60.0, 300.0)
"""How long a failed delivery waits before its next try (the last, for every try after)."""
MOST_TRIES = 30
"""Tries of one reminder before keel gives it up (about two hours of failures): outcome
``given_up``, logged."""
REMINDER = "⏰ Reminder: "
"""How a reminder begins when said (``keel.nodes.remind``): the offline model reads "done" right
after one as about its task."""
LATE_SECONDS = 60.0
"""A reminder delivered later than this after its time says it is late."""


@dataclass(frozen=True)
class Reminder:
    """A task's time that fell due, as delivered: whose, which task, where, and when."""

    id: str
    user_id: str
    task_id: int
    title: str
    conversation_id: str | None
    remind_at: datetime
    attempts: int = 0
    delivered_at: datetime | None = None
    outcome: str | None = None

    def late(self, now: datetime) -> bool:
        """Delivered (or delivered at ``now``) later than ``LATE_SECONDS`` after its time."""
        at = self.delivered_at or now
        return (at - self.remind_at).total_seconds() > LATE_SECONDS

    def as_dict(self) -> dict[str, Any]:
        """The reminder as keel's API gives it."""
        return {
            "id": self.id,
            "task_id": self.task_id,
            "title": self.title,
            "conversation_id": self.conversation_id,
            "remind_at": self.remind_at.isoformat(),
            "delivered_at": self.delivered_at.isoformat() if self.delivered_at else None,
            "outcome": self.outcome,
        }


def _reminder(row: Row) -> Reminder:
    delivered = row.get("delivered_at")
    return Reminder(
        id=row["id"],
        user_id=row["user_id"],
        task_id=int(row["task_number"]),
        title=row["title"],
        conversation_id=row.get("conversation_id"),
        remind_at=read_time(row["remind_at"]),
        attempts=int(row.get("attempts") or 0),
        delivered_at=read_time(delivered) if delivered else None,
        outcome=row.get("outcome"),
    )


def reminder_id(user_id: str, task_id: int, at: datetime) -> str:
    """The one id of a task's reminder at a time: taking it twice makes one row."""
    return str(
        uuid.uuid5(uuid.NAMESPACE_URL, f"keel:reminder:{user_id}:{task_id}:{at.isoformat()}")
    )


NOT_IN_TELEGRAM = (
    "(conversation_id IS NULL OR conversation_id NOT IN "
    "(SELECT conversation_id FROM keel_telegram_chats))"
)
_DUE = "FROM keel_tasks WHERE remind_at IS NOT NULL AND remind_at <= :now AND completed = :false"


class ReminderStore:
    """The reminders of every user: taken when due, leased for delivery, and read back."""

    def __init__(self, db: Database, clock: Clock = utcnow) -> None:
        """Keep reminders in ``db``'s app tables; ``clock`` says when now is."""
        self.db = db
        self.clock = clock

    async def take_due(self, limit: int = 500) -> int:
        """Move up to ``limit`` tasks whose reminder time has come into ``keel_reminders``; how
        many were taken.
        """  # noqa: D205
        now = self.clock()
        skip = " FOR UPDATE SKIP LOCKED" if self.db.dialect == "postgresql" else ""
        params = {"now": self.db.time(now), "false": False, "limit": limit}
        if await self.db.fetchone(f"SELECT 1 AS due {_DUE} LIMIT 1", params) is None:
            return 0  # nothing due: no write lock taken (SQLite's is the database's)
        async with self.db.transaction() as tx:
            rows = await tx.fetch(
                f"SELECT id, user_id, number, title, remind_at, remind_in {_DUE} "
                f"ORDER BY remind_at LIMIT :limit{skip}",
                params,
            )
            if not rows:
                return 0
            taken = [
                {
                    "id": reminder_id(r["user_id"], int(r["number"]), read_time(r["remind_at"])),
                    "user_id": r["user_id"],
                    "task_number": r["number"],
                    "title": r["title"],
                    "conversation_id": r["remind_in"],
                    "remind_at": r["remind_at"],
                    "claimed_at": params["now"],
                    "next_try_at": params["now"],
                }
                for r in rows
            ]
            await tx.executemany(
                "INSERT INTO keel_reminders (id, user_id, task_number, title, conversation_id, "
                "remind_at, claimed_at, next_try_at, attempts) VALUES (:id, :user_id, "
                ":task_number, :title, :conversation_id, :remind_at, :claimed_at, :next_try_at, 0) "
                "ON CONFLICT (id) DO NOTHING",
                taken,
            )
            await tx.executemany(
                "UPDATE keel_tasks SET remind_at = NULL WHERE id = :id",
                [{"id": r["id"]} for r in rows],
            )
        return len(rows)

    async def lease(
        self, limit: int = 50, lease_seconds: float = 60.0, telegram: bool = True
    ) -> list[Reminder]:
        """Up to ``limit`` reminders waiting for delivery, leased to the caller for
        ``lease_seconds`` (no other process leases them meanwhile); their tries counted.

        ``telegram`` False: none said in a conversation a Telegram chat talks in, which only a
        process with the bot can tell there.
        """  # noqa: D205
        now = self.clock()
        skip = " FOR UPDATE SKIP LOCKED" if self.db.dialect == "postgresql" else ""
        params = {
            "now": self.db.time(now),
            "until": self.db.time(now + timedelta(seconds=lease_seconds)),
            "limit": limit,
        }
        chats = "" if telegram else f" AND {NOT_IN_TELEGRAM}"
        waiting = await self.db.fetchone(
            "SELECT 1 AS waiting FROM keel_reminders WHERE delivered_at IS NULL "
            f"AND next_try_at <= :now{chats} LIMIT 1",
            params,
        )
        if waiting is None:
            return []
        async with self.db.transaction() as tx:
            rows = await tx.fetch(
                "SELECT id FROM keel_reminders WHERE delivered_at IS NULL AND next_try_at <= :now"
                f"{chats} ORDER BY next_try_at LIMIT :limit{skip}",
                params,
            )
            leased = []
            for row in rows:
                got = await tx.fetchone(
                    "UPDATE keel_reminders SET next_try_at = :until, attempts = attempts + 1 "
                    "WHERE id = :id AND delivered_at IS NULL RETURNING *",
                    {**params, "id": row["id"]},
                )
                if got is not None:
                    leased.append(_reminder(got))
        return leased

    async def delivered(self, reminder: Reminder, outcome: str = "delivered") -> bool:
        """Mark ``reminder`` delivered (or ``dropped``: its task is done or gone; ``given_up``);
        False when another process marked it first.
        """  # noqa: D205
        marked = await self.db.execute(
            "UPDATE keel_reminders SET delivered_at = :now, outcome = :outcome, last_error = NULL "
            "WHERE id = :id AND delivered_at IS NULL",
            {"now": self.db.time(self.clock()), "outcome": outcome, "id": reminder.id},
        )
        return marked > 0

    async def failed(self, reminder: Reminder, error: str, retry_in: float | None = None) -> float:
        """Lease ``reminder`` again after its backoff; the wait. After ``MOST_TRIES`` failures it
        is given up (the wait is then 0). With ``retry_in`` (the conversation is busy, a question
        waits) it is leased again then, and the lease counts as no try.
        """  # noqa: D205
        if retry_in is None and reminder.attempts >= MOST_TRIES:
            await self.delivered(reminder, "given_up")
            return 0.0
        wait = (
            retry_in
            if retry_in is not None
            else BACKOFF_SECONDS[min(max(reminder.attempts - 1, 0), len(BACKOFF_SECONDS) - 1)]
        )
        waited = " , attempts = attempts - 1" if retry_in is not None else ""  # no try: a wait
        await self.db.execute(
            f"UPDATE keel_reminders SET next_try_at = :at, last_error = :error{waited} "
            "WHERE id = :id AND delivered_at IS NULL",
            {
                "at": self.db.time(self.clock() + timedelta(seconds=wait)),
                "error": error[:200],
                "id": reminder.id,
            },
        )
        return wait

    async def snooze(self, user_id: str, task_id: int, at: datetime) -> bool:
        """Remind the user of their open task ``task_id`` again at ``at``; False: no such open
        task, or it has a time of its own to come already (it was moved, or snoozed).
        """  # noqa: D205
        done = await self.db.execute(
            "UPDATE keel_tasks SET remind_at = :at WHERE user_id = :user AND number = :n "
            "AND completed = :false AND (remind_at IS NULL OR remind_at <= :now)",
            {
                "at": self.db.time(at),
                "user": user_id,
                "n": task_id,
                "false": False,
                "now": self.db.time(self.clock()),
            },
        )
        return done > 0

    async def next_due(self) -> datetime | None:
        """When the next reminder falls due or waits for a try (None: nothing is waiting)."""
        row = await self.db.fetchone(
            "SELECT min(remind_at) AS at FROM keel_tasks WHERE remind_at IS NOT NULL "
            "AND completed = :false",
            {"false": False},
        )
        tries = await self.db.fetchone(
            "SELECT min(next_try_at) AS at FROM keel_reminders WHERE delivered_at IS NULL"
        )
        times = [read_time(r["at"]) for r in (row, tries) if r is not None and r["at"] is not None]
        return min(times) if times else None

    async def of_user(
        self, user_id: str, limit: int = 50, since: datetime | None = None
    ) -> list[Reminder]:
        """The user's reminders that fell due, newest first (delivered or on their way); with
        ``since``, only those delivered since then (and those still on their way).
        """  # noqa: D205
        since_sql = ""
        params: dict[str, Any] = {"user": user_id, "limit": limit}
        if since is not None:
            since_sql = " AND (delivered_at IS NULL OR delivered_at > :since)"
            params["since"] = self.db.time(since)
        rows = await self.db.fetch(
            "SELECT * FROM keel_reminders WHERE user_id = :user AND "
            f"(outcome IS NULL OR outcome = 'delivered'){since_sql} "
            "ORDER BY remind_at DESC, id LIMIT :limit",
            params,
        )
        return [_reminder(r) for r in rows]

    async def get(self, user_id: str, reminder: str) -> Reminder | None:
        """The user's reminder ``reminder`` (None: no such reminder of theirs)."""
        row = await self.db.fetchone(
            "SELECT * FROM keel_reminders WHERE id = :id AND user_id = :user",
            {"id": reminder, "user": user_id},
        )
        return _reminder(row) if row is not None else None
