"""The topic_detect node: starts a new topic segment when the conversation changes course.

A new topic starts on an explicit switch or correction phrase, after a silence longer than
``topic_gap_seconds`` since the conversation's last message, or on ``/reset``. The old topic is
ended with a summary; the new one is titled from its first message (by a model when one is
configured). History is never deleted. The node also loads the earlier messages the model will
see this turn (see ``keel.nodes.support.history``).
"""

from __future__ import annotations

import re
import uuid
from datetime import datetime
from typing import Any

import structlog
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.constants import TAG_NOSTREAM
from langgraph.runtime import Runtime

from keel.checkpoints.messages import MessageLog
from keel.checkpoints.topics import TopicRow
from keel.nodes.support.context import KeelContext, conversation_id
from keel.nodes.support.events import TopicReason, topic_changed
from keel.nodes.support.history import load_history
from keel.nodes.support.previews import preview
from keel.nodes.support.state import KeelState, Topic

log = structlog.get_logger(__name__)

SWITCH_PHRASES = (
    "new topic",
    "different topic",
    "let's discuss",
    "lets discuss",
    "switching to",
    "moving on to",
    "but we weren't discussing",
    "but we werent discussing",
    "we were talking about",
)
CORRECTION_PHRASES = (
    "but we weren't discussing",
    "but we werent discussing",
    "we were talking about",
    "not about that",
    "different topic",
    "let's discuss",
    "lets discuss",
    "switching topics",
    "new topic",
    "back to",
)
PHRASES = tuple(dict.fromkeys(sorted(SWITCH_PHRASES + CORRECTION_PHRASES, key=len, reverse=True)))
_PHRASE = re.compile(r"(?<![\w'])(" + "|".join(re.escape(p) for p in PHRASES) + r")(?![\w'])", re.I)
RESET_COMMAND = "/reset"
TITLE_WORDS = 5
TITLE_MAX_CHARS = 60


def detect_topic_change(
    message: str, last_message_at: datetime | None, now: datetime, gap_seconds: float
) -> tuple[TopicReason, str | None] | None:
    """Why ``message`` starts a new topic (reason, phrase), or None when it does not."""
    if message.strip().lower() == RESET_COMMAND:
        return "user_reset", None
    match = _PHRASE.search(message.replace("\u2019", "'"))
    if match:
        return "phrase", match.group(1).lower()
    if last_message_at is not None and (now - last_message_at).total_seconds() > gap_seconds:
        return "time_gap", None
    return None


def topic_title(message: str) -> str:
    """The first five words of ``message`` (at most 60 characters), with "..." when it was cut."""
    words = message.split()
    title = " ".join(words[:TITLE_WORDS])
    if len(title) > TITLE_MAX_CHARS:
        return title[:TITLE_MAX_CHARS].rstrip() + "..."
    return f"{title}..." if len(words) > TITLE_WORDS else title or "(empty)"


async def title_for(message: str, ctx: KeelContext) -> str:
    """A title for a topic opened by ``message``: the model's when configured, else first words."""
    if ctx.resources.title_model is None:
        return topic_title(message)
    prompt = "Give a title of at most six words for a conversation that starts with the message."
    try:
        messages = [SystemMessage(prompt), HumanMessage(message[:2000])]
        reply = await ctx.resources.title_model.ainvoke(messages, config={"tags": [TAG_NOSTREAM]})
        title = " ".join(reply.text.strip().strip('"').split())
    except Exception as exc:  # a title is never worth failing a turn for
        log.warning("topic_title_failed", error=type(exc).__name__)
        return topic_title(message)
    return title[:TITLE_MAX_CHARS] or topic_title(message)


async def summarize_topic(log_: MessageLog, conversation: str, topic: Topic) -> str:
    """A short summary of a topic: its title and its last exchange."""
    recent = await log_.recent(conversation, topic_id=topic["id"], limit=4, exclude_roles=("tool",))
    said = "; ".join(f"{m.role}: {preview(m.content, 80)}" for m in recent if m.content)
    return f"{topic['title']}. Last exchange: {said}" if said else topic["title"]


def as_state_topic(row: TopicRow) -> Topic:
    """The topic as kept in graph state."""
    return {"id": row.id, "title": row.title, "started_at": row.started_at.isoformat()}


async def start_topic(
    ctx: KeelContext,
    conversation: str,
    title: str,
    previous: Topic | None,
    topic_id: str | None = None,
) -> TopicRow:
    """End ``previous`` (with a summary) and start a new topic titled ``title``.

    ``topic_id`` names the topic; starting it again (a replayed turn) changes nothing.
    """
    summary = (
        await summarize_topic(ctx.resources.messages, conversation, previous) if previous else None
    )
    return await ctx.resources.topics.start(conversation, title, summary, topic_id)


async def _last_message_at(
    state: KeelState, ctx: KeelContext, conversation: str
) -> datetime | None:
    if at := state.get("last_message_at"):
        return datetime.fromisoformat(at)
    return await ctx.resources.messages.last_message_at(conversation)


async def topic_detect(state: KeelState, runtime: Runtime[KeelContext]) -> dict[str, Any]:
    """Keep or change the active topic, and load the history the model will see."""
    ctx = runtime.context
    conversation, message, now = (
        conversation_id(runtime),
        state.get("content", ""),
        ctx.resources.clock(),
    )
    active = state.get("topic")
    if active is None and (row := await ctx.resources.topics.active(conversation)):
        active = as_state_topic(row)
    last_at = await _last_message_at(state, ctx, conversation)
    change = detect_topic_change(message, last_at, now, ctx.topic_gap_seconds)
    if active is None or change is not None:
        reason, phrase = change or ("phrase", None)
        title = await title_for(message, ctx)
        turn = (state.get("stats") or {}).get("turns", 0)
        topic_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"keel:{conversation}:turn-{turn}"))
        row = await start_topic(ctx, conversation, title, active, topic_id)
        if active is not None:
            event = topic_changed(active["id"], row.id, row.title, reason, phrase)
            runtime.stream_writer(event)
            log.info("topic_changed", **event["data"])
        active = as_state_topic(row)
    changed = change is not None
    history = await load_history(ctx.resources.messages, conversation, active["id"], changed, now)
    return {"topic": active, "topic_changed": changed, "history": history}
