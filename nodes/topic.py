"""The topic_detect node: starts a new topic segment when the conversation changes course.

The detector (``keel.nodes.context.topic_shifts``) decides: a switch or correction phrase,
a silence longer than ``topic_gap_seconds``, or a message that no longer follows the active topic
(the semantic signal) starts a new topic; a message that goes back to what a closed topic was
about ("back to the groceries: ...", or a shift to its subject) reopens that one instead (reason
``returned``, its own history the context again). The old topic is ended with a summary of what was
asked and done in it; a new one is titled by a few words of its subject, never by small talk (by a
model when one is configured; see ``keel.nodes.support.topic_names``), and a topic opened by small
talk or a reset is named by the first message that has a subject. History is never deleted. The
node also loads the earlier messages the model will see this turn (see
``keel.nodes.context.recency``). It reads the log of the turn's own lineage
(``keel.nodes.state.lineage``): a turn forked from an earlier checkpoint sees its branch only.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import structlog
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.tools import BaseTool
from langgraph.constants import TAG_NOSTREAM
from langgraph.runtime import Runtime

from keel.checkpoints.branches import Lineage
from keel.checkpoints.messages import LoggedMessage
from keel.checkpoints.topics import TopicRow
from keel.nodes.context.recency import load_history
from keel.nodes.context.topic_model import USER, Said, speaker
from keel.nodes.context.topic_shifts import (
    RETURN_CANDIDATES,
    Shift,
    assess,
    explicit_change,
    find_return,
    go_back,
    named_return,
    says_return,
)
from keel.nodes.events import topic_changed
from keel.nodes.models.lookups import LOOKUP_PREFIX
from keel.nodes.run_context import KeelContext, Resources, conversation_id
from keel.nodes.state.lineage import lineage, turn_key
from keel.nodes.state.schema import HistoryEntry, KeelState, Topic
from keel.nodes.support.topic_names import (
    SMALL_TALK,
    SUMMARY_MESSAGES,
    TITLE_WORDS,
    asked_in,
    readable_summary,
    subject_of,
    summary_of,
    title_line,
    topic_title,
)
from keel.tools.spec import tool_sentence

log = structlog.get_logger(__name__)

RESET_TITLE = "Reset - New Conversation"
"""The title of the topic a reset opens until its first message names it."""
UNNAMED = (RESET_TITLE, SMALL_TALK)
"""Titles that name no subject: the next message that has one names the topic."""


async def title_for(message: str, ctx: KeelContext) -> str:
    """A title for a topic opened by ``message``: the model's when configured, else a few words
    of its subject (``SMALL_TALK`` for small talk, which no model is asked to name).
    """  # noqa: D205
    tools = ctx.resources.tools
    if ctx.resources.title_model is None or subject_of(message, tools) is None:
        return topic_title(message, tools)
    prompt = (
        f"Give a title of at most {TITLE_WORDS} words for a conversation that starts with the "
        "message."
    )
    try:
        messages = [SystemMessage(prompt), HumanMessage(message[:2000])]
        reply = await ctx.resources.title_model.ainvoke(messages, config={"tags": [TAG_NOSTREAM]})
        title = title_line(reply.text.strip().strip('"'))
    except Exception as exc:  # a title is never worth failing a turn for
        log.warning("topic_title_failed", error=type(exc).__name__)
        return topic_title(message, tools)
    return title or topic_title(message, tools)


async def summarize_topic(
    resources: Resources, conversation: str, topic: Topic, seen: Lineage | None = None
) -> str:
    """What was asked and done in a topic, by its last messages (in the lineage ``seen``); its
    title when nothing but small talk was said.
    """  # noqa: D205
    recent = await resources.messages.recent(
        conversation, topic_id=topic["id"], limit=SUMMARY_MESSAGES, lineage=seen
    )
    said = [(m.role, _done(m, resources.tools) if m.role == "tool" else m.content) for m in recent]
    return summary_of(said, resources.tools) or topic["title"]


def _done(message: LoggedMessage, tools: Sequence[BaseTool]) -> str:
    """What a logged tool result did, in its tool's sentence ("" for an error, a refusal, a call
    not run, or a lookup the model made for itself).
    """  # noqa: D205
    lookup = (message.tool_call_id or "").startswith(LOOKUP_PREFIX)
    if not message.tool_name or lookup:
        return ""
    try:
        result: Any = json.loads(message.content)
    except ValueError:  # a result is JSON; text is an error, a refusal or a call not run
        return ""
    return tool_sentence(tools, message.tool_name, result) or ""


def what_it_was_about(row: TopicRow) -> str:
    """A closed topic's words to find it by: its title and what its summary says was asked.

    What keel did is left out: the subject is the user's (and an offline model's help text would
    make every topic look alike).
    """
    asked = asked_in(readable_summary(row.summary)) if row.summary else ""
    return f"{row.title} {asked}".rstrip()


def _state_topic(row: TopicRow) -> Topic:
    """The topic as kept in graph state."""
    return {"id": row.id, "title": row.title, "started_at": row.started_at.isoformat()}


async def current_topic(state: KeelState, resources: Resources, conversation: str) -> Topic | None:
    """The conversation's active topic: the state's, else the topic table's."""
    if (topic := state.get("topic")) is not None:
        return topic
    row = await resources.topics.active(conversation)
    return _state_topic(row) if row else None


async def start_topic(
    ctx: KeelContext,
    conversation: str,
    title: str,
    previous: Topic | None,
    topic_id: str | None = None,
    seen: Lineage | None = None,
) -> Topic:
    """End ``previous`` (with a summary of what ``seen`` holds of it) and start a new topic
    titled ``title``.

    ``topic_id`` names the topic; starting it again (a replayed turn) changes nothing.
    """  # noqa: D205
    summary = (
        await summarize_topic(ctx.resources, conversation, previous, seen) if previous else None
    )
    return _state_topic(await ctx.resources.topics.start(conversation, title, summary, topic_id))


async def return_to_topic(
    resources: Resources,
    conversation: str,
    topic_id: str,
    previous: Topic | None,
    seen: Lineage | None = None,
) -> Topic:
    """Make the earlier topic ``topic_id`` the active one again, ending ``previous`` (summed up
    from what ``seen`` holds of it).

    The one way back to a topic: the topic_detect node's returns and the API's reopen both take
    it. Raises TopicNotFound when the conversation has no such topic.
    """  # noqa: D205
    summary = await summarize_topic(resources, conversation, previous, seen) if previous else None
    return _state_topic(await resources.topics.reopen(conversation, topic_id, summary))


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


async def _earlier_topics(
    resources: Resources, conversation: str, active: Topic
) -> list[tuple[str, str]]:
    """The topics a message may go back to (id, what it was about): the last closed ones."""
    ended = await resources.topics.closed(conversation, RETURN_CANDIDATES)
    if (now_active := await resources.topics.active(conversation)) is not None:
        ended.append(now_active)  # a replay of this very turn finds its return made already
    return [(t.id, what_it_was_about(t)) for t in ended if t.id != active["id"]]


async def _shift(
    state: KeelState, ctx: KeelContext, conversation: str, active: Topic | None, now: datetime
) -> tuple[Shift | None, list[HistoryEntry] | None]:
    """Whether this message changes the topic, and the active topic's history if it was read."""
    resources, message = ctx.resources, state.get("request", "")
    last_at = await _last_message_at(state, ctx, conversation)
    shift = explicit_change(message, last_at, now, ctx.topic_gap_seconds)
    if active is None:
        return shift, None  # nothing to compare: a first message
    closed = None
    if (named := named_return(message)) is not None:  # "back to the groceries: ..."
        closed = await _earlier_topics(resources, conversation, active)
        if (back := go_back(named, closed, active["title"])) is not None:
            return back, None
    if shift is not None and not says_return(shift):
        return shift, None  # a change said outright
    seen = lineage(state)
    history = await load_history(resources.messages, conversation, active["id"], False, now, seen)
    # the topic's last messages, oldest first: the history's two sections are one stretch of it
    recent = [Said(speaker(h["role"]), h["content"]) for h in history if h["role"] != "tool"]
    chosen = _just_chosen(state, history)
    embedder = None if chosen else resources.embedder
    offline = resources.tools if resources.title_model is None else None  # no language model
    threshold = resources.shift_threshold
    title = [active["title"]]
    shift = assess(Said(USER, message), recent, shift, embedder, offline, threshold, title)
    if shift is None or not (shift.reason == "semantic" or says_return(shift)):
        return shift, history
    if closed is None:
        closed = await _earlier_topics(resources, conversation, active)
    texts = [said.text for said in recent]
    found = find_return(
        message, shift, texts, closed, resources.embedder, resources.return_threshold
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
    active = await current_topic(state, ctx.resources, conversation)
    shift, history = await _shift(state, ctx, conversation, active, now)
    if active is None or shift is not None:
        seen = lineage(state)
        if shift is not None and shift.topic_id is not None:
            topic = await return_to_topic(ctx.resources, conversation, shift.topic_id, active, seen)
        else:
            title = await title_for(message, ctx)
            key = turn_key(state)
            topic_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"keel:{conversation}:{key}"))
            topic = await start_topic(ctx, conversation, title, active, topic_id, seen)
        if active is not None and shift is not None:
            event = topic_changed(
                active["id"], topic["id"], topic["title"], shift.reason, shift.phrase
            )
            runtime.stream_writer(event)
            log.info("topic_changed", score=shift.score, **event["data"])
        active = topic
    elif active["title"] in UNNAMED:  # the first message with a subject names the topic
        title = await title_for(message, ctx)
        if title != active["title"]:
            await ctx.resources.topics.retitle(conversation, active["id"], title)
            active = {**active, "title": title}
    changed = shift is not None
    if changed or history is None:  # a return reads its topic's own history, a new topic the last
        fresh = changed and shift is not None and shift.topic_id is None  # few messages
        history = await load_history(
            ctx.resources.messages, conversation, active["id"], fresh, now, lineage(state)
        )
    return {"topic": active, "topic_changed": changed, "history": history}
