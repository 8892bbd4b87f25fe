"""The remind node: a reminder that fell due, said in its conversation.

Entered from user_input when the turn's input is ``{"command": "remind", "reminder_id": ...}``:
keel's reminder delivery (``keel.graphs.reminding``) runs it in the conversation the reminder was
set from, under the reminder's id as its idempotency key, so it is said once. The reminder is the
user's own (``ReminderStore.get`` reads it by user), and its task still open: one done or deleted
meanwhile is not reminded. It joins ``messages`` (so LangGraph's clients show it in the thread) and
the message log as the assistant's, where the model reads it as context: "done" or "move it to
tomorrow" said next is about it. Nothing else changes: a question waiting for its answer still
waits, the mission and its plan stay, and no new turn is counted.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import structlog
from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime

from keel.checkpoints.reminders import REMINDER, Reminder
from keel.checkpoints.times import day_words
from keel.nodes.run_context import KeelContext
from keel.nodes.state.commands import BadCommand
from keel.nodes.state.reducers import unstreamed
from keel.nodes.state.schema import KeelState
from keel.nodes.support.message_log import log_exchange
from keel.tools.tasks.rows import due_moment
from keel.tools.tasks.store import TaskError

log = structlog.get_logger(__name__)

ASSISTANT = "assistant"
UTC_ZONE = ZoneInfo("UTC")


def reminder_text(reminder: Reminder, now: datetime, shown_at: datetime) -> str:
    """What a reminder says: the task, by number and title; when late, when it was for
    (``shown_at``: its time in the user's zone).
    """  # noqa: D205
    said = f"{REMINDER}{reminder.title} (task {reminder.task_id})"
    if not reminder.late(now):
        return f"{said}."
    return f"{said}, late: it was for {shown_at:%H:%M} on {day_words(shown_at.date())}."


def still_due(task: dict[str, Any] | None, reminder: Reminder) -> bool:
    """The task is there, open, and due no later than the reminder's time: one done, deleted, or
    moved later (a repeating one done: to its next time) since the reminder was taken is not said.
    """  # noqa: D205
    if task is None or task["completed"]:
        return False
    due = task.get("due")
    if not due:
        return True  # its time taken away after it fell due: said, as it fell due
    return (due_moment(due, UTC_ZONE) or reminder.remind_at) <= (
        reminder.remind_at + timedelta(minutes=1)
    )


def message_key(reminder_id: str) -> str:
    """The reminder's message id in ``messages`` and key in the log: one message, however often
    its delivery runs.
    """  # noqa: D205
    return f"reminder:{reminder_id}"


async def remind(state: KeelState, runtime: Runtime[KeelContext]) -> dict[str, Any]:
    """Say the input's reminder in the conversation, changing nothing else."""
    ctx = runtime.context
    reminder_id = state.get("reminder_id")
    reminder = await ctx.resources.reminders.get(ctx.user_id, reminder_id or "")
    if reminder is None:
        raise BadCommand("the remind command names no reminder of this user that fell due")
    try:
        task = await ctx.store.get(ctx.user_id, reminder.task_id)
    except TaskError:
        task = None
    if not still_due(task, reminder):
        log.info("reminder_not_due", reminder_id=reminder.id, task_id=reminder.task_id)
        return {}
    now = ctx.resources.clock()
    text = reminder_text(reminder, now, reminder.remind_at.astimezone(ctx.store.zone))
    key = message_key(reminder.id)
    await log_exchange(runtime, state, key, ASSISTANT, text)
    log.info("reminder_said", reminder_id=reminder.id, task_id=reminder.task_id)
    return {"messages": unstreamed([AIMessage(text, id=key)])}
