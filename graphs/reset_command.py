"""``/reset``: a fresh start for a conversation, its history kept.

``reset_conversation`` is what ``/reset`` in the chat, the REST endpoint and the WebSocket action
call. It starts a new topic (ending the active one with a summary), clears the mission and the
todolist (reason ``user_requested``), drops any pending confirmation, and records all of it in the
checkpoint as the end of a turn. The message log is untouched.
"""

from __future__ import annotations

import structlog
from langchain_core.messages import RemoveMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from keel.graphs.builder import KeelGraph
from keel.graphs.resources import prepared
from keel.graphs.result import Reset
from keel.graphs.runner import ended_turn, thread_config
from keel.nodes.support.context import KeelContext
from keel.nodes.support.events import mission_reset, topic_changed
from keel.nodes.support.previews import preview
from keel.nodes.topic import as_state_topic, summarize_topic

log = structlog.get_logger(__name__)

RESET_TITLE = "Reset - New Conversation"
RESET_REASON = "user_requested"
RESET_MESSAGE = (
    "Conversation context has been reset. Starting fresh! Previous messages are preserved "
    "but won't affect future responses."
)


async def reset_conversation(graph: KeelGraph, conversation_id: str, context: KeelContext) -> Reset:
    """Reset the conversation's context; the answer follows the REST contract, plus events."""
    config = thread_config(conversation_id)
    values = (await graph.aget_state(config)).values
    todolist = values.get("todolist")
    previous_todolist_id = todolist["id"] if todolist else None
    resources = (await prepared(context)).resources
    topics = resources.topics
    previous = await topics.active(conversation_id)
    summary = (
        await summarize_topic(resources.messages, conversation_id, as_state_topic(previous))
        if previous
        else None
    )
    topic = await topics.start(conversation_id, RESET_TITLE, summary)
    changed = topic_changed(previous.id if previous else None, topic.id, topic.title, "user_reset")
    reset, entry = mission_reset(RESET_REASON, previous_todolist_id, resources.clock())
    await graph.aupdate_state(
        config,
        {
            "mission": None,
            "todolist": None,
            "pending_question": None,
            "answers": {},
            "topic": as_state_topic(topic),
            "topic_changed": True,
            "window": [RemoveMessage(id=REMOVE_ALL_MESSAGES)],
            "audit": [entry],
            **ended_turn(),
        },
        as_node="response",
    )
    log.info(
        "conversation_reset",
        conversation_id=conversation_id,
        new_topic_id=topic.id,
        previous_mission_preview=preview(values.get("mission")),
    )
    return {
        "success": True,
        "message": RESET_MESSAGE,
        "new_topic_id": topic.id,
        "previous_messages_preserved": True,
        "events": [changed, reset],
    }
