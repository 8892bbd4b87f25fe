"""Reminders in Telegram: one said in its conversation's chats with Done, Snooze and Tomorrow
buttons, and what each button does.

``send_reminder`` is the channel ``keel.api.telegram.front.TelegramFront.remind`` gives
``keel.graphs.reminding``: the reminder goes to each chat whose member (the reminder's own user)
talks in its conversation. ``answer`` carries out a press: Done completes the task with its tool,
as the model calls it (a question waiting in the conversation stays unanswered); Snooze and
Tomorrow remind of it again in 10 minutes, or tomorrow at 9 in keel's time zone.
"""  # noqa: D205

from __future__ import annotations

from datetime import datetime, time, timedelta

import structlog
from langchain_core.messages import ToolCall
from telegram.error import BadRequest, Forbidden

from keel.api.telegram import texts
from keel.api.telegram.said import Said, keel_user
from keel.api.telegram.wire import Wire
from keel.checkpoints.clock import utcnow
from keel.checkpoints.reminders import Reminder
from keel.checkpoints.telegram_chats import TelegramChats
from keel.checkpoints.times import zone_named
from keel.graphs.turns import Turns
from keel.nodes.remind import reminder_text
from keel.tools.calls import payload, run_tool_call
from keel.tools.spec import tool_sentence

log = structlog.get_logger(__name__)

REMINDER_VERBS = frozenset(verb for verb, _ in texts.REMINDER_BUTTONS)
SNOOZE = timedelta(minutes=10)
ONE_DAY = timedelta(days=1)
MORNING = time(9, 0)
"""When "Tomorrow" reminds again."""


async def send_reminder(
    wire: Wire, chats: TelegramChats, timezone: str | None, reminder: Reminder
) -> None:
    """Say ``reminder`` in each chat whose member talks in its conversation, with its buttons; a
    chat that refuses (the bot left it) is let go, the others still get it.
    """  # noqa: D205
    if reminder.conversation_id is None:
        return
    text = reminder_text(reminder, utcnow(), reminder.remind_at.astimezone(zone_named(timezone)))
    for chat_id, user_id in await chats.talking_in(reminder.conversation_id):
        if keel_user(user_id) != reminder.user_id:
            continue
        owner = f"{reminder.task_id}:{user_id}"
        buttons = [[(label, f"{verb}:{owner}") for verb, label in texts.REMINDER_BUTTONS]]
        try:
            await wire.send(chat_id, text, buttons=buttons)
        except (BadRequest, Forbidden) as exc:
            log.warning("telegram_reminder_refused", chat_id=chat_id, error=type(exc).__name__)
            continue
        log.info("telegram_reminder_sent", chat_id=chat_id, reminder_id=reminder.id)


async def answer(turns: Turns, timezone: str | None, said: Said, verb: str, ref: str) -> str:
    """Carry out a reminder's button ``verb`` for task ``ref``; what to say."""
    resources = turns.resources
    if verb == "rd":
        call: ToolCall = {
            "name": "complete_todo_task",
            "args": {"task_id": int(ref)},
            "id": f"telegram-done-{said.chat_id}-{said.name}",
            "type": "tool_call",
        }
        store = resources.store.in_zone(timezone)
        done = await run_tool_call(call, said.user, store, tools=resources.tools)
        result = payload(done, text=True)
        sentence = tool_sentence(resources.tools, call["name"], result)
        return (sentence or str(result)).removeprefix("Error: ")
    zone = zone_named(timezone)
    now = utcnow().astimezone(zone)
    at = now + SNOOZE if verb == "rs" else datetime.combine(now.date() + ONE_DAY, MORNING, zone)
    snoozed = await resources.reminders.snooze(said.user, int(ref), at)
    text = texts.SNOOZED.format(at=f"{at:%H:%M}" if verb == "rs" else f"{at:%a %H:%M}")
    return text if snoozed else texts.REMINDER_GONE
