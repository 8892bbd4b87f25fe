"""The topic_detect node: starts a new topic segment when the conversation changes course.

The detector (``keel.nodes.context.topic_shifts``) decides: a switch or correction phrase,
a silence longer than ``topic_gap_seconds``, or a message that no longer follows the active topic
(the semantic signal) starts a new topic; a shift back to the subject of a closed topic reopens
that one instead (reason ``returned``, its own history the context again). The old topic is ended
with a summary; a new one is titled from its first message (by a model when one is configured).
History is never deleted. The node also loads the earlier messages the model will see this turn
(see ``keel.nodes.context.recency``). It reads the log of the turn's own lineage
(``keel.nodes.state.lineage``): a turn forked from an earlier checkpoint sees its branch only.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

import structlog
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.constants import TAG_NOSTREAM
from langgraph.runtime import Runtime

from keel.checkpoints.branches import Lineage
from keel.checkpoints.messages import MessageLog
from keel.checkpoints.text_rules import one_line
from keel.checkpoints.topics import TopicRow
from keel.nodes.context.recency import load_history
from keel.nodes.context.topic_shifts import (
    RETURN_CANDIDATES,
    Shift,
    assess,
    explicit_change,
    find_return,
    says_return,
)
from keel.nodes.events import topic_changed
from keel.nodes.run_context import KeelContext, Resources, conversation_id
from keel.nodes.state.lineage import lineage, turn_key
from keel.nodes.state.schema import HistoryEntry, KeelState, Topic
from keel.nodes.support.previews import preview

log = structlog.get_logger(__name__)

LAST_EXCHANGE = ". Last exchange: "
"""Where a topic's summary turns from its title to what was said last (``summarize_topic``)."""
TITLE_MAX_CHARS = 80
RESET_TITLE = "Reset - New Conversation"
"""The title of the topic a reset opens until its first message names it."""


def _one_line(text: str) -> str:
    """``text`` cleaned as names and titles are (``one_line``); what no table holds replaced."""
    return one_line(text.encode("utf-8", "replace").decode("utf-8").replace("\x00", ""))


def topic_title(message: str) -> str:
    """``message`` on one line, whole when it fits in 80 characters, else cut between words
    with "..." (a single long word, a URL, is cut where it must).
    """  # noqa: D205
    title = _one_line(message)
    if len(title) <= TITLE_MAX_CHARS:
        return title or "(empty)"
    cut = title[: TITLE_MAX_CHARS + 1].rsplit(" ", 1)[0]
    if len(cut) > TITLE_MAX_CHARS or len(cut) < TITLE_MAX_CHARS // 2:
        cut = title[:TITLE_MAX_CHARS]
    return cut.rstrip() + "..."


async def title_for(message: str, ctx: KeelContext) -> str:
    """A title for a topic opened by ``message``: the model's when configured, else first words."""
    if ctx.resources.title_model is None:
        return topic_title(message)
    prompt = "Give a title of at most six words for a conversation that starts with the message."
    try:
        messages = [SystemMessage(prompt), HumanMessage(message[:2000])]
        reply = await ctx.resources.title_model.ainvoke(messages, config={"tags": [TAG_NOSTREAM]})
        title = _one_line(reply.text.strip().strip('"'))
    except Exception as exc:  # a title is never worth failing a turn for
        log.warning("topic_title_failed", error=type(exc).__name__)
        return topic_title(message)
    return title[:TITLE_MAX_CHARS] or topic_title(message)


async def summarize_topic(
    log_: MessageLog, conversation: str, topic: Topic, seen: Lineage | None = None
) -> str:
    """A short summary of a topic: its title and its last exchange (in the lineage ``seen``)."""
    recent = await log_.recent(
        conversation, topic_id=topic["id"], limit=4, exclude_roles=("tool",), lineage=seen
    )
    said = "; ".join(f"{m.role}: {preview(m.content, 80)}" for m in recent if m.content)
    return f"{topic['title']}{LAST_EXCHANGE}{said}" if said else topic["title"]


def what_it_was_about(row: TopicRow) -> str:
    """A closed topic's words to match a return against: its title and what the user said last.

    The assistant's side of the summary is left out: the subject is the user's (and an offline
    model's help text would make every topic look alike).
    """
    title, _, said = (row.summary or row.title).partition(LAST_EXCHANGE)
    users = [part.removeprefix("user: ") for part in said.split("; ") if part.startswith("user: ")]
    return " ".join([title, *users])


def as_state_topic(row: TopicRow) -> Topic:
    """The topic as kept in graph state."""
    return {"id": row.id, "title": row.title, "started_at": row.started_at.isoformat()}


async def start_topic(
    ctx: KeelContext,
    conversation: str,
    title: str,
    previous: Topic | None,
    topic_id: str | None = None,
    seen: Lineage | None = None,
) -> TopicRow:
    """End ``previous`` (with a summary of what ``seen`` holds of it) and start a new topic
    titled ``title``.

    ``topic_id`` names the topic; starting it again (a replayed turn) changes nothing.
    """  # noqa: D205
    messages = ctx.resources.messages
    summary = await summarize_topic(messages, conversation, previous, seen) if previous else None
    return await ctx.resources.topics.start(conversation, title, summary, topic_id)


async def return_to_topic(
    resources: Resources,
    conversation: str,
    topic_id: str,
    previous: Topic | None,
    seen: Lineage | None = None,
) -> TopicRow:
    """Make the earlier topic ``topic_id`` the active one again, ending ``previous`` (summed up
    from what ``seen`` holds of it).

    The one way back to a topic: the topic_detect node's returns and the API's reopen both take
    it. Raises TopicNotFound when the conversation has no such topic.
    """  # noqa: D205
    messages = resources.messages
    summary = await summarize_topic(messages, conversation, previous, seen) if previous else None
    return await resources.topics.reopen(conversation, topic_id, summary)


async def _last_message_at(
    state: KeelState, ctx: KeelContext, conversation: str
) -> datetime | None:
    if at := state.get("last_message_at"):
        return datetime.fromisoformat(at)
    return await ctx.resources.messages.last_message_at(conversation, lineage(state))


def _just_chosen(state: KeelState, history: list[HistoryEntry]) -> bool:
    """The user just went back to this topic (the API's reopen): the next message is about it.

    The reopen is the state's last audit entry, and nothing was said in the topic since.
    """
    audit = state.get("audit") or []
    if not audit or audit[-1].get("kind") != "topic_reopened":
        return False
    if not history:
        return True
    return datetime.fromisoformat(audit[-1]["at"]) > datetime.fromisoformat(history[-1]["at"])


async def _shift(
    state: KeelState, ctx: KeelContext, conversation: str, active: Topic | None, now: datetime
) -> tuple[Shift | None, list[HistoryEntry] | None]:
    """Whether this message changes the topic, and the active topic's history if it was read."""
    resources, message = ctx.resources, state.get("request", "")
    last_at = await _last_message_at(state, ctx, conversation)
    shift = explicit_change(message, last_at, now, ctx.topic_gap_seconds)
    if active is None or shift is not None and not says_return(shift):
        return shift, None  # nothing to compare: a first message, or a change said outright
    seen = lineage(state)
    history = await load_history(resources.messages, conversation, active["id"], False, now, seen)
    recent = [h["content"] for h in history if h["section"] == "current" and h["role"] != "tool"]
    chosen = _just_chosen(state, history)
    embedder = None if chosen else resources.embedder
    offline = resources.tools if resources.title_model is None else None  # no language model
    shift = assess(message, recent, shift, embedder, offline, resources.shift_threshold)
    if shift is None or not (shift.reason == "semantic" or says_return(shift)):
        return shift, history
    ended = await resources.topics.closed(conversation, RETURN_CANDIDATES)
    if (now_active := await resources.topics.active(conversation)) is not None:
        ended.append(now_active)  # a replay of this very turn finds its return made already
    closed = [(t.id, what_it_was_about(t)) for t in ended if t.id != active["id"]]
    found = find_return(
        message, shift, recent, closed, resources.embedder, resources.return_threshold
    )
    return found, history


async def topic_detect(state: KeelState, runtime: Runtime[KeelContext]) -> dict[str, Any]:
    """Keep, change or go back to an earlier topic, and load the history the model will see."""
    ctx = runtime.context
    conversation, message, now = (
        conversation_id(runtime),
        state.get("request", ""),
        ctx.resources.clock(),
    )
    active = state.get("topic")
    if active is None and (row := await ctx.resources.topics.active(conversation)):
        active = as_state_topic(row)
    shift, history = await _shift(state, ctx, conversation, active, now)
    if active is None or shift is not None:
        seen = lineage(state)
        if shift is not None and shift.topic_id is not None:
            row = await return_to_topic(ctx.resources, conversation, shift.topic_id, active, seen)
        else:
            title = await title_for(message, ctx)
            key = turn_key(state)
            topic_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"keel:{conversation}:{key}"))
            row = await start_topic(ctx, conversation, title, active, topic_id, seen)
        if active is not None and shift is not None:
            event = topic_changed(active["id"], row.id, row.title, shift.reason, shift.phrase)
            runtime.stream_writer(event)
            log.info("topic_changed", score=shift.score, **event["data"])
        active = as_state_topic(row)
    elif active["title"] == RESET_TITLE:  # the first message after a reset names its topic
        title = await title_for(message, ctx)
        await ctx.resources.topics.retitle(conversation, active["id"], title)
        active = {**active, "title": title}
    changed = shift is not None
    if changed or history is None:  # a return reads its topic's own history, a new topic the last
        fresh = changed and shift is not None and shift.topic_id is None  # few messages
        history = await load_history(
            ctx.resources.messages, conversation, active["id"], fresh, now, lineage(state)
        )
    return {"topic": active, "topic_changed": changed, "history": history}
