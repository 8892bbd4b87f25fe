"""The reset_conversation node: ``/reset``, a fresh start for a conversation, its history kept.

Entered from user_input when the turn's input is the reset command (``{"command": "reset"}``, or
the message ``/reset`` typed), from any client: the API's reset, the WebSocket's reset action,
``keel chat``, Studio, the SDK, a notebook. It starts a new topic (ending the active one with a
summary; a ``topic_changed`` event, reason ``user_reset``), clears the mission and the todolist
(a ``state_updated`` event, reason ``user_requested``), forgets the answers, and drops a pending
question or a confirmation that waited (a later "yes" answers nothing). The turn ends with the
reply below, which the message log keeps at the start of the new topic as a row of role
``command``, so that a reloaded page still shows where the conversation was reset; the messages
before it are untouched.
"""

from __future__ import annotations

from typing import Any

import structlog
from langgraph.runtime import Runtime

from keel.checkpoints.messages import COMMAND
from keel.nodes.events import mission_reset, topic_changed
from keel.nodes.run_context import KeelContext, conversation_id
from keel.nodes.state.commands import command_done, reply_key, step_key
from keel.nodes.state.lineage import lineage
from keel.nodes.state.schema import KeelState
from keel.nodes.support.message_log import log_exchange
from keel.nodes.support.previews import preview
from keel.nodes.support.waiting import waiting_calls
from keel.nodes.topic import RESET_TITLE, current_topic, start_topic

log = structlog.get_logger(__name__)

RESET_REASON = "user_requested"
RESET_MESSAGE = (
    "Conversation context has been reset. Starting fresh! Previous messages are preserved "
    "but won't affect future responses."
)


async def reset_conversation(state: KeelState, runtime: Runtime[KeelContext]) -> dict[str, Any]:
    """Start a new topic with the mission cleared, and end the turn saying so."""
    ctx, conversation = runtime.context, conversation_id(runtime)
    previous = await current_topic(state, ctx.resources, conversation)
    key = step_key(runtime, "reset")
    started = await start_topic(ctx, conversation, RESET_TITLE, previous, key, lineage(state))
    await log_exchange(runtime, state, reply_key(runtime, "reset"), COMMAND, RESET_MESSAGE, started)
    previous_id = previous["id"] if previous else None
    runtime.stream_writer(topic_changed(previous_id, started["id"], started["title"], "user_reset"))
    todolist = state.get("todolist")
    reset, entry = mission_reset(
        RESET_REASON, todolist["id"] if todolist else None, ctx.resources.clock()
    )
    runtime.stream_writer(reset)
    log.info(
        "conversation_reset",
        new_topic_id=started["id"],
        previous_mission_preview=preview(state.get("mission")),
        confirmation_dropped=waiting_calls(state, ctx.resources.tools) is not None,
    )
    return {
        **command_done(RESET_MESSAGE, runtime, "reset"),
        "mission": None,
        "todolist": None,
        "answers": {},
        "topic": started,
        "topic_changed": True,
        "audit": [entry],
    }
