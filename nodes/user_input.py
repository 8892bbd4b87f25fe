"""The user_input node: a user message arrives; it answers a waiting question or starts a turn.

A command (the input's ``command``, or the message ``/reset`` typed) is no message: user_input
hands it on (``command``, ``topic_id``) to the node that carries it out, ``reset_conversation`` or
``reopen_topic``, whatever waits; a confirmation waiting for yes or no is dropped there, never
answered. While a destructive tool call waits for its confirmation (``awaiting``), a message is
the answer: the state machine stays in TOOL_EXECUTION and the graph goes back there with it. This
is how a plain new input on a paused thread resumes it, for any client; ``Command(resume=...)``
does the same. Otherwise a new turn begins (USER_INPUT): a fresh window holding only the message
(earlier turns live in the message log), the per-turn counters reset, the turn counted. The turn
gets its key (``keel.nodes.state.lineage``), which names its message: a re-run writes the same
message, never a second one, and a turn forked from an earlier checkpoint writes its own. The
turn's time budget (``turn_seconds``) starts here, for a new turn and for the answer to a
confirmation.
"""

from __future__ import annotations

import time
from typing import Any

import structlog
from langchain_core.messages import HumanMessage, RemoveMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.runtime import Runtime

from keel.checkpoints.in_flight import BEGINNING, CheckpointNotKept
from keel.nodes.run_context import KeelContext
from keel.nodes.state.commands import turn_command
from keel.nodes.state.lineage import next_turn_key, starting
from keel.nodes.state.machine import AgentState
from keel.nodes.state.schema import KeelState, bump, turn_start, unstreamed
from keel.nodes.support.in_flight import note_answer
from keel.nodes.support.message_log import user_message_id
from keel.nodes.support.previews import preview

log = structlog.get_logger(__name__)


def answers_confirmation(state: KeelState) -> bool:
    """The message is the answer to a waiting confirmation (``user_input`` kept it as such)."""
    return bool(state.get("awaiting")) and state.get("answer") is not None


async def user_input(state: KeelState, runtime: Runtime[KeelContext]) -> dict[str, Any]:
    """Hand a command on, take the message as the answer to a waiting question, or start a turn."""
    if (command := turn_command(state)) is not None:
        log.info(
            "command_received", command=command["command"], waiting=bool(state.get("awaiting"))
        )
        return command
    content = state.get("content", "")
    deadline = time.time() + runtime.context.turn_seconds  # the turn's time budget
    if state.get("awaiting"):
        log.info("confirmation_answered", message_preview=preview(content))
        note_answer(runtime)  # a yes lets tools act: noted first
        return {"answer": content, "stop_requested": False, "turn_deadline": deadline}
    if (note := runtime.context.note) is not None and not state.get("stats"):
        noted = note.in_flight
        if noted.forked and noted.start not in (None, BEGINNING):  # pruned since it was checked:
            raise CheckpointNotKept(noted.start)  # LangGraph ran it from an empty state
    stats = bump(state.get("stats"), "turns")
    log.info("turn_started", turn=stats["turns"], message_preview=preview(content))
    key = next_turn_key(state, stats["turns"], content, state.get("request_key"))
    started: KeelState = {"stats": stats, "turn_key": key, **starting(state, stats["turns"])}
    return {
        "window": unstreamed(
            [
                RemoveMessage(id=REMOVE_ALL_MESSAGES),
                HumanMessage(content, id=user_message_id(runtime, started)),
            ]
        ),
        **started,
        **turn_start(agent_state=AgentState.USER_INPUT.value, turn_deadline=deadline),
    }
