"""Back to an earlier topic: the topic a user picks becomes the active one again.

``reopen_topic`` is what the API's reopen operation (the chat page's "back to this topic") calls.
The active topic is ended with its summary, the chosen one reopened, and the checkpoint records it
as the end of a turn with the topic in state, a ``topic_changed`` event (reason ``returned``) and
an audit entry; the next turn's context is that topic's history (the silence before the return
does not count as a gap that opens another topic). Mission, todolist and the message
log are untouched; a pending confirmation is dropped, as a change of subject leaves it unanswered.
"""

from __future__ import annotations

from typing import Any, TypedDict

import structlog

from keel.graphs.builder import KeelGraph
from keel.graphs.resources import prepared
from keel.graphs.runner import ended_turn, thread_config
from keel.graphs.topic_result import TopicSegment, topic_segment
from keel.nodes.support.context import KeelContext
from keel.nodes.support.events import Event, TopicReason, audit_entry, topic_changed
from keel.nodes.topic import as_state_topic, return_to_topic

log = structlog.get_logger(__name__)

REASON: TopicReason = "returned"
DROPPED = "The question waiting for your yes or no was dropped; ask again to do it."


class Reopened(TypedDict):
    """What reopening a topic did."""

    topic: TopicSegment
    previous_topic_id: str | None
    message: str
    events: list[Event]


async def reopen_topic(
    graph: KeelGraph, conversation_id: str, topic_id: str, context: KeelContext
) -> Reopened:
    """Make ``topic_id`` the conversation's active topic (TopicNotFound when it has none such)."""
    resources = (await prepared(context)).resources
    topics = resources.topics
    previous = await topics.active(conversation_id)
    if previous is not None and previous.id == topic_id:
        return {
            "topic": topic_segment(previous),
            "previous_topic_id": None,
            "message": f"Already on the topic: {previous.title}",
            "events": [],
        }
    before = as_state_topic(previous) if previous is not None else None
    topic = await return_to_topic(resources, conversation_id, topic_id, before)
    previous_id = previous.id if previous else None
    changed = topic_changed(previous_id, topic.id, topic.title, REASON)
    detail: dict[str, Any] = dict(changed["data"])
    now = resources.clock()
    update = {
        "topic": as_state_topic(topic),
        "last_message_at": now.isoformat(),  # a silence before the return is not a new topic
        "pending_question": None,
        "audit": [audit_entry("topic_reopened", REASON, detail, now)],
        **ended_turn(),
    }
    config = thread_config(conversation_id)
    dropped = bool((await graph.aget_state(config)).values.get("awaiting"))
    await graph.aupdate_state(config, update, as_node="response")
    log.info("topic_reopened", conversation_id=conversation_id, **detail)
    message = f"Back to the topic: {topic.title}"
    return {
        "topic": topic_segment(topic),
        "previous_topic_id": previous_id,
        "message": f"{message}. {DROPPED}" if dropped else message,
        "events": [changed],
    }
