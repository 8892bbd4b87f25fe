"""The reopen_topic node: back to an earlier topic, which becomes the active one again.

Entered from user_input when the turn's input is ``{"command": "reopen", "topic_id": ...}`` (the
API's reopen operation, the chat page's "Back to this topic", or any client of the graph). The
active topic is ended with its summary, the chosen one reopened: the state holds it, a
``topic_changed`` event (reason ``returned``) and an audit entry ``topic_reopened`` say so, and the
next turn's context is that topic's history (the silence before the return does not count as a gap
that opens another topic). The mission and its todolist were the other topic's: they are cleared
(a ``state_updated`` event, reason ``topic_reopened``), and the next message makes a fresh one;
the message log keeps what was said, and the reply as a row of its own (role ``command``, like a
reset's). A question or a confirmation that waited is dropped, as a change of subject leaves it
unanswered, and the reply says so.
Reopening the active topic changes no topic; nor does a topic the conversation does not have
(the reply says so; the API answers 404 before it runs).
"""

from __future__ import annotations

from typing import Any

import structlog
from langgraph.runtime import Runtime

from keel.checkpoints.messages import COMMAND
from keel.nodes.event_types import TopicReason
from keel.nodes.events import audit_entry, topic_changed
from keel.nodes.mission import REASON_REOPENED, clear_mission
from keel.nodes.run_context import KeelContext, conversation_id
from keel.nodes.state.commands import BadCommand, command_done, reply_key
from keel.nodes.state.lineage import lineage
from keel.nodes.state.schema import KeelState
from keel.nodes.support.message_log import log_exchange
from keel.nodes.support.previews import preview
from keel.nodes.support.waiting import waiting_calls
from keel.nodes.topic import current_topic, return_to_topic

log = structlog.get_logger(__name__)

REASON: TopicReason = "returned"
NOT_FOUND = "This conversation has no such topic; it stays on the topic it was on"
DROPPED = "The question waiting for your yes or no was dropped; ask again to do it."


async def reopen_topic(state: KeelState, runtime: Runtime[KeelContext]) -> dict[str, Any]:
    """Make the input's ``topic_id`` the active topic, and end the turn saying so."""
    ctx, conversation, topic_id = runtime.context, conversation_id(runtime), state.get("topic_id")
    if not topic_id:
        raise BadCommand("the reopen command needs the topic_id of the topic to go back to")
    previous = await current_topic(state, ctx.resources, conversation)
    update: dict[str, Any] = {}
    if previous is not None and previous["id"] == topic_id:
        message = f"Already on the topic: {previous['title']}"
    elif await ctx.resources.topics.get(conversation, topic_id) is None:
        log.warning("topic_to_reopen_not_found", topic_id=preview(topic_id))
        message = NOT_FOUND
    else:
        seen = lineage(state)
        topic = await return_to_topic(ctx.resources, conversation, topic_id, previous, seen)
        previous_id = previous["id"] if previous else None
        changed = topic_changed(previous_id, topic["id"], topic["title"], REASON)
        runtime.stream_writer(changed)
        detail: dict[str, Any] = dict(changed["data"])
        now = ctx.resources.clock()
        update = {
            "topic": topic,
            "last_message_at": now.isoformat(),  # a silence before the return is not a new topic
            "audit": [audit_entry("topic_reopened", REASON, detail, now)],
        }
        if state.get("mission") is not None or state.get("todolist") is not None:
            cleared = clear_mission(state, REASON_REOPENED, runtime)
            # the reopen stays the last entry: the next message is about the topic chosen
            update = {**update, **cleared, "audit": [*cleared["audit"], *update["audit"]]}
        log.info("topic_reopened", **detail)
        message = f"Back to the topic: {topic['title']}"
    if waiting_calls(state, ctx.resources.tools) is not None:
        message = f"{message}. {DROPPED}"
    await log_exchange(
        runtime, state, reply_key(runtime, "reopen"), COMMAND, message, update.get("topic")
    )
    return {**command_done(message, runtime, "reopen"), **update}
