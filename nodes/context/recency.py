"""The context builder: which earlier messages the model sees, and how they are shown.

Recency-weighted, per topic: the active topic's last 6 messages are the "current conversation";
at most 5 older messages of the same topic are "earlier context (only if relevant)". Right after a
topic change the model sees only the last 4 messages, under a notice that the topic changed. Tool
results from earlier topics, or older than 30 minutes, never enter. The picked messages are
rendered into one system message placed before the current turn: the transcript keel's offline
model reads, or, for any other model, a list of what was already handled (``history_messages``),
since a small model continues a transcript it is shown. The assistant's earlier replies
are shown without the notes keel added to them for the person (``keel.nodes.models.notes``), so
the model does not take them for its own words. The rows are read from one
lineage of the log (``keel.checkpoints.branches``): a forked conversation's context never holds
the other branch's messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from langchain_core.messages import BaseMessage, SystemMessage

from keel.checkpoints.branches import Lineage
from keel.checkpoints.messages import LoggedMessage, MessageLog
from keel.nodes.models.notes import CURRENT_HEADER, EARLIER_HEADER, TOPIC_CHANGED, without_notes
from keel.nodes.state.schema import HistoryEntry

CURRENT_MESSAGES = 6
EARLIER_MESSAGES = 5
EARLIER_SCAN = 14
AFTER_CHANGE_MESSAGES = 4
TOOL_RESULT_MAX_AGE = timedelta(minutes=30)
ENTRY_MAX_CHARS = 2000

ROLE_NAMES = {"user": "User", "assistant": "You", "tool": "Tool result"}


def _eligible(m: LoggedMessage, topic_id: str | None, now: datetime) -> bool:
    if m.role != "tool":
        return True
    return m.topic_id == topic_id and now - m.created_at <= TOOL_RESULT_MAX_AGE


def _entry(m: LoggedMessage, section: str) -> HistoryEntry:
    if m.role == "assistant":  # the reply as the model wrote it: keel's notes are not its words
        content = without_notes(m.content)
    else:
        content = m.content if m.role != "tool" else f"{m.tool_name}: {m.content}"
    if len(content) > ENTRY_MAX_CHARS:
        content = content[: ENTRY_MAX_CHARS - 1] + "…"
    return {
        "role": m.role,
        "content": content,
        "at": m.created_at.isoformat(),
        "section": "current" if section == "current" else "earlier",
    }


def select_history(
    logged: Sequence[LoggedMessage], topic_id: str | None, topic_changed: bool, now: datetime
) -> list[HistoryEntry]:
    """Pick the messages the model sees from ``logged`` (oldest first, before this turn)."""
    usable = [m for m in logged if _eligible(m, topic_id, now)]
    if topic_changed:
        return [_entry(m, "current") for m in usable[-AFTER_CHANGE_MESSAGES:]]
    usable = [m for m in usable if m.topic_id == topic_id]
    current = usable[-CURRENT_MESSAGES:]
    earlier = usable[-(CURRENT_MESSAGES + EARLIER_SCAN) : -CURRENT_MESSAGES][-EARLIER_MESSAGES:]
    if len(usable) <= CURRENT_MESSAGES:
        earlier = []
    return [_entry(m, "earlier") for m in earlier] + [_entry(m, "current") for m in current]


async def load_history(
    log: MessageLog,
    conversation_id: str,
    topic_id: str | None,
    topic_changed: bool,
    now: datetime,
    seen: Lineage | None = None,
) -> list[HistoryEntry]:
    """Read the few log rows the context needs (a bounded query, of the lineage ``seen``) and
    pick from them.
    """  # noqa: D205
    if topic_changed:
        rows = await log.recent(
            conversation_id, limit=AFTER_CHANGE_MESSAGES, exclude_roles=("tool",), lineage=seen
        )
    else:
        rows = await log.recent(
            conversation_id,
            topic_id=topic_id,
            limit=CURRENT_MESSAGES + EARLIER_SCAN,
            lineage=seen,
        )
    return select_history(rows, topic_id, topic_changed, now)


def _lines(entries: Sequence[HistoryEntry]) -> str:
    return "\n".join(f"{ROLE_NAMES.get(e['role'], e['role'])}: {e['content']}" for e in entries)


def history_messages(history: Sequence[HistoryEntry], topic_changed: bool) -> list[BaseMessage]:
    """The picked history for a model that reads a conversation (any model but keel's offline
    one, which reads ``render_history``'s transcript): one system message telling what was
    already handled, an item per exchange ("the user asked ...; create_todo_task returned ...;
    you answered ..."), under the sections' names.

    Neither a transcript nor the chat's own messages: a small model continues a transcript it is
    shown, and takes earlier replies shown without their tool calls ("Created task: buy milk")
    for the way to act, writing the next one without calling a tool.
    """  # noqa: D205
    parts = [TOPIC_CHANGED] if topic_changed else []
    for section, header in (("earlier", EARLIER_HEADER), ("current", CURRENT_HEADER)):
        items = _exchanges([e for e in history if e["section"] == section])
        if items:
            name = header.lstrip("# ")
            parts.append(f"{name}, already handled (do not do it again):\n" + "\n".join(items))
    return [SystemMessage("\n\n".join(parts))] if parts else []


def _exchanges(entries: Sequence[HistoryEntry]) -> list[str]:
    """One line per exchange: what the user asked, what the tools returned, what was answered."""
    items: list[list[str]] = []
    for entry in entries:
        text = " / ".join(line for line in entry["content"].split("\n") if line.strip())
        if entry["role"] == "user" or not items:
            items.append([])
        if entry["role"] == "user":
            items[-1].append(f"the user asked: {text}")
        elif entry["role"] == "tool":
            name, _, result = text.partition(": ")
            items[-1].append(f"{name} returned {result}")
        elif text:
            items[-1].append(f"you answered: {text}")
    return [f"- {'; '.join(parts)}" for parts in items if parts]


def render_history(history: Sequence[HistoryEntry], topic_changed: bool) -> str | None:
    """The system message text that carries the picked history, or None when there is none."""
    if not history and not topic_changed:
        return None
    parts = []
    if topic_changed:
        parts.append(TOPIC_CHANGED)
    earlier = [e for e in history if e["section"] == "earlier"]
    current = [e for e in history if e["section"] == "current"]
    if current:
        parts.append(f"{CURRENT_HEADER}\n" + _lines(current))
    if earlier:
        parts.append(f"{EARLIER_HEADER}\n" + _lines(earlier))
    return "\n\n".join(parts)
