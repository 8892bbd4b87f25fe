"""The context builder: which earlier messages the model sees, and how they are shown.

Recency-weighted, per topic: the active topic's last 6 messages are the "current conversation";
at most 5 older messages of the same topic are "earlier context (only if relevant)". Right after a
topic change the model sees only the last 4 messages, under a notice that the topic changed. Tool
results from earlier topics, or older than 30 minutes, never enter. The picked messages are
rendered into one system message placed before the current turn. The rows are read from one
lineage of the log (``keel.checkpoints.branches``): a forked conversation's context never holds
the other branch's messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from keel.checkpoints.branches import Lineage
from keel.checkpoints.messages import LoggedMessage, MessageLog
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


def render_history(history: Sequence[HistoryEntry], topic_changed: bool) -> str | None:
    """The system message text that carries the picked history, or None when there is none."""
    if not history and not topic_changed:
        return None
    parts = []
    if topic_changed:
        parts.append(
            "IMPORTANT: the user has switched topics or corrected you. Focus on the current "
            "message; do not carry over the earlier topic."
        )
    earlier = [e for e in history if e["section"] == "earlier"]
    current = [e for e in history if e["section"] == "current"]
    if current:
        parts.append("## Current conversation (most important)\n" + _lines(current))
    if earlier:
        parts.append("## Earlier context (only if relevant)\n" + _lines(earlier))
    return "\n\n".join(parts)
