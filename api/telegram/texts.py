"""What the Telegram bot says of its own, and how a reply is cut to Telegram's message size.

Everything is sent as plain text (no parse mode), so a task title full of ``*``, ``_``, ``[`` or
`````` ` `````` is shown as typed and never breaks a message. ``split_message`` cuts a reply
longer than Telegram's 4,096 characters (counted as Telegram counts them, in UTF-16 code units)
at line boundaries. Used by ``keel.api.telegram.front``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from keel.checkpoints.topics import TopicRow
from keel.graphs.result import Snapshot

MESSAGE_LIMIT = 4096
"""Telegram's longest message, in UTF-16 code units."""

COMMANDS = {
    "start": "What keel does",
    "help": "The commands",
    "reset": "Clear the context and start fresh (messages are kept)",
    "state": "The mission, its plan and a question waiting for you",
    "new": "Start a new conversation",
    "topics": "This conversation's topics, to go back to one",
}
"""The commands, with the descriptions Telegram shows in its menu (setMyCommands)."""

START = (
    "I'm keel, a todo assistant that keeps your tasks and remembers where we were.\n"
    'Tell me what to do ("Add buy milk", "What\'s on my list?", "Delete task 2"); /help lists '
    "the commands."
)
HELP = "\n".join(
    [
        "Talk to me in plain words: add, list, find, rename, complete or delete tasks.",
        "Deleting or renaming asks first: press Yes or No (or type yes or no).",
        "",
        *(f"/{name} - {what}" for name, what in COMMANDS.items()),
    ]
)
RESET_FOLLOW_UP = "What would you like to discuss?"
NEW_CONVERSATION = "A new conversation: what would you like to do?"
EXPIRED = "This question has expired."
NOT_YOURS = "This button is for someone else."
TOPIC_GONE = "That topic is no longer in this conversation."
PRIVATE = "Sorry, this keel answers only the people it was set up for."
BUSY = "I'm still working on your previous message; send this again in a moment."
REMINDER_BUTTONS = (("rd", "Done"), ("rs", "Snooze 10 min"), ("rt", "Tomorrow"))
"""A reminder's buttons: verb and label."""
SNOOZED = "I'll remind you again at {at}."
REMINDER_GONE = "That task is done or gone: nothing to remind you of."
TEXT_ONLY = "I read text messages only."
UNKNOWN_COMMAND = "I don't know that command; /help lists the ones I do."
NO_TOPICS = "This conversation has no topics yet: say something first."


def refused(reason: str) -> str:
    """The answer to a message keel does not take (too long, a NUL character), with why."""
    return f"Sorry, I can't take that message ({reason}). Nothing was done with it."


def units(text: str) -> int:
    """The length of ``text`` as Telegram counts it (UTF-16 code units)."""
    return len(text.encode("utf-16-le")) // 2


def _cut_line(line: str, limit: int) -> Iterator[str]:
    """A line longer than ``limit`` in pieces, each ending at a space where there is one."""
    while units(line) > limit:
        end, size = 0, 0
        for i, ch in enumerate(line):  # the most characters that fit
            size += 2 if ord(ch) > 0xFFFF else 1
            if size > limit:
                break
            end = i + 1
        space = line.rfind(" ", 0, end)
        cut = space + 1 if space > 0 else end
        yield line[:cut]
        line = line[cut:]
    if line:
        yield line


def split_message(text: str, limit: int = MESSAGE_LIMIT) -> list[str]:
    """``text`` as messages of at most ``limit`` units, cut at line boundaries where it can."""
    text = text.strip() or "…"
    parts: list[str] = []
    current = ""
    for line in text.split("\n"):
        for piece in _cut_line(line, limit):
            joined = f"{current}\n{piece}" if current else piece
            if current and units(joined) > limit:
                parts.append(current)
                joined = piece
            current = joined
    if current.strip():
        parts.append(current)
    return parts


def state_text(state: Snapshot, question: str | None) -> str:
    """Where the conversation stands: the mission, its plan and what waits for an answer."""
    lines = [f"Mission: {state['mission'] or 'none'}"]
    todolist: dict[str, Any] | None = state.get("todolist")
    if todolist and todolist.get("items"):
        lines.append("Plan:")
        lines += [f"  {i['id']}. [{i['status']}] {i['description']}" for i in todolist["items"]]
    else:
        lines.append("Plan: none")
    waiting = state.get("pending_confirmation")
    asked = waiting["prompt"] if waiting else question
    lines.append(f"Waiting for your answer: {asked}" if asked else "No question is waiting.")
    if state.get("topic"):
        lines.append(f"Topic: {state['topic']['title']}")  # type: ignore[index]
    return "\n".join(lines)


def topics_text(topics: Sequence[TopicRow]) -> str:
    """The conversation's topics, oldest first, the active one marked."""
    lines = ["Topics of this conversation (press one to go back to it):"]
    for n, topic in enumerate(topics, 1):
        mark = " (current)" if topic.is_active else ""
        lines.append(f"{n}. {topic.title}{mark}")
    return "\n".join(lines)
