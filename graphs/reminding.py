"""Reminders delivered: each one that fell due said once, in the conversation it was set from.

``delivering(turns, reminders)`` runs beside a keel process that serves people (``keel serve``
and each of its workers, ``keel chat``, ``keel telegram``): every ``poll_seconds`` it asks the
database what fell due (``ReminderStore.take_due``), leases what waits for delivery
(``ReminderStore.lease``) and delivers it. Any number of processes may run it on one database:
the database decides which takes and which delivers each reminder.

A delivery is a turn: the ``remind`` command (``keel.nodes.remind``) run through ``Turns`` in the
reminder's conversation, under an idempotency key made from the reminder's id. So it waits its
turn behind a person's, goes through the graph every client's turns go through, and a delivery
run again (its process died before it was marked delivered; the lease ran out) is answered from
the recorded outcome, never said twice. A busy conversation is tried again in a moment, a failure
after a backoff. A task done or deleted meanwhile is dropped, unsaid; a reminder whose
conversation is gone is kept for the API to read (``GET /v1/reminders``) and said nowhere.
Channels say it elsewhere too before it counts as delivered (Telegram's chat that talks in the
conversation, with Done / Snooze buttons); a process without a Telegram bot leaves the reminders
of Telegram's conversations to one with it. Listeners hear every outcome (the API counts them).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import timedelta

import structlog

from keel.checkpoints.conversation_store import ConversationNotFound
from keel.checkpoints.locks import ConversationLocked
from keel.checkpoints.reminders import Reminder, ReminderStore
from keel.graphs.runner import snapshot
from keel.graphs.turns import Turns
from keel.nodes.remind import message_key, still_due
from keel.tools.tasks.rows import TaskError

log = structlog.get_logger(__name__)

BUSY_RETRY_SECONDS = 2.0
"""A conversation busy with a person's turn is tried again after this."""
QUESTION_RETRY_SECONDS = 15.0
QUESTION_PATIENCE = timedelta(minutes=10)
"""A reminder waits this long at most for a question waiting for yes or no to be answered: said
meanwhile, it would come between the question and its answer."""
LEASE = 10
LEASE_SECONDS = 120.0
"""Reminders a process leases at a time, and for how long: time enough for each to be said."""

Listener = Callable[[Reminder, str], Awaitable[None] | None]
"""Told of each reminder's outcome: delivered, late, dropped or failed."""
Channel = Callable[[Reminder], Awaitable[None]]
"""Says a reminder somewhere beside its conversation (Telegram); raises when it could not."""


@dataclass
class Delivery:
    """One process's share of delivering reminders."""

    turns: Turns
    reminders: ReminderStore
    poll_seconds: float = 1.0
    listeners: list[Listener] = field(default_factory=list)
    channels: list[Channel] = field(default_factory=list)
    """Where else reminders are said, before they count as delivered: one that fails is tried
    again (its conversation's turn is answered from its record, not said twice)."""
    telegram: bool = False
    """This process tells Telegram's chats (a channel does): it also takes their reminders."""

    async def once(self) -> int:
        """Take what fell due and deliver what this process leased; how many were delivered."""
        return (await self._round())[0]

    async def _round(self) -> tuple[int, bool]:
        """One round: how many were delivered, and whether more may wait (a full lease)."""
        await self.reminders.take_due()
        done = 0
        leased = await self.reminders.lease(LEASE, LEASE_SECONDS, telegram=self.telegram)
        for reminder in leased:
            done += await self.deliver(reminder)
        return done, len(leased) == LEASE

    async def deliver(self, reminder: Reminder) -> int:
        """Say ``reminder`` in its conversation (1), or drop it or try it later (0)."""
        resources = self.turns.resources
        try:
            task = await resources.store.get(reminder.user_id, reminder.task_id)
        except TaskError:
            task = None
        if not still_due(task, reminder):
            await self.reminders.delivered(reminder, "dropped")
            return await self._told(reminder, "dropped", 0)
        now = resources.clock()
        late = reminder.late(now)
        cid = reminder.conversation_id
        try:
            if cid is not None:
                waiting = (await snapshot(self.turns.graph, cid))["pending_confirmation"]
                if waiting and now - reminder.remind_at < QUESTION_PATIENCE:
                    await self.reminders.failed(
                        reminder, "a question waits", QUESTION_RETRY_SECONDS
                    )
                    return 0
                await self.turns.take(
                    cid,
                    reminder.user_id,
                    "",
                    key=message_key(reminder.id),
                    command={"command": "remind", "reminder_id": reminder.id},
                    wait=0,
                )
            for channel in self.channels:
                await channel(reminder)
        except ConversationNotFound:
            log.info("reminder_conversation_gone", reminder_id=reminder.id)
        except ConversationLocked:
            await self.reminders.failed(reminder, "conversation busy", BUSY_RETRY_SECONDS)
            return 0
        except Exception as exc:  # the database or the graph failed: tried again later
            wait = await self.reminders.failed(reminder, type(exc).__name__)
            log.warning(
                "reminder_failed", reminder_id=reminder.id, error=type(exc).__name__, retry_in=wait
            )
            return await self._told(reminder, "failed", 0)
        if not await self.reminders.delivered(reminder):  # its lease ran out: another said it too
            log.warning("reminder_marked_elsewhere", reminder_id=reminder.id)
        log.info("reminder_delivered", reminder_id=reminder.id, task_id=reminder.task_id, late=late)
        return await self._told(reminder, "late" if late else "delivered", 1)

    async def _told(self, reminder: Reminder, outcome: str, result: int) -> int:
        for listener in self.listeners:
            try:
                told = listener(reminder, outcome)
                if inspect.isawaitable(told):
                    await told
            except Exception:
                log.exception("reminder_listener_failed", reminder_id=reminder.id)
        return result

    async def run(self) -> None:
        """Deliver until cancelled, asking the database every ``poll_seconds``."""
        while True:
            more = False
            try:
                _, more = await self._round()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the database is away: asked again at the next poll
                log.warning("reminders_unreachable", error=type(exc).__name__)
            await asyncio.sleep(0 if more else self.poll_seconds)  # a full lease: the next at once


@contextlib.asynccontextmanager
async def delivering(
    turns: Turns,
    poll_seconds: float = 1.0,
    listeners: list[Listener] | None = None,
    channels: list[Channel] | None = None,
) -> AsyncIterator[Delivery]:
    """Deliver reminders while the block runs (``poll_seconds`` 0: never, for a process that
    only reads); ``channels``: Telegram's, in a process with the bot.
    """  # noqa: D205
    delivery = Delivery(
        turns,
        turns.resources.reminders,
        poll_seconds,
        listeners or [],
        channels or [],
        telegram=bool(channels),
    )
    if poll_seconds <= 0:
        yield delivery
        return
    task = asyncio.create_task(delivery.run(), name="keel-reminders")
    try:
        yield delivery
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
