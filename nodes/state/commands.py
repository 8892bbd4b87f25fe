"""Commands: what a turn's input may ask instead of a message, and how a command ends its turn.

A command is the input's ``command`` (``reset``, or ``reopen`` with a ``topic_id``), or the message
``/reset`` typed; ``turn_command`` reads it for the user_input node. The command nodes
(``reset_conversation``, ``reopen_topic``) end their turn at once, in RESPONSE as a finished turn
is, not complete: the window holds only the reply (the turn's result reads it like any reply), a
confirmation or a question that waited is dropped, and no message is written to the log (a command
is no part of the conversation; a reset leaves its reply there under its own role, to be shown
where it happened). A key made here follows the run's task, so a replay of the same step makes the
same row.
"""

from __future__ import annotations

import uuid
from typing import Any

from langchain_core.messages import AIMessage, RemoveMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.runtime import Runtime

from keel.nodes.context.topic_shifts import RESET_COMMAND
from keel.nodes.run_context import KeelContext, conversation_id
from keel.nodes.state.machine import AgentState
from keel.nodes.state.reducers import unstreamed
from keel.nodes.state.schema import CommandName, KeelState, turn_start

COMMANDS: tuple[CommandName, ...] = ("reset", "reopen", "remind")


class BadCommand(ValueError):
    """A turn's input names a command keel does not have, or leaves out what it needs."""

    code = "bad_command"


def turn_command(state: KeelState, text: str) -> dict[str, Any] | None:
    """The command of this turn's input (or its message ``text``, ``/reset``) as the update that
    hands it on; None for a message.

    Raises:
        BadCommand: an unknown command, or ``reopen`` without a ``topic_id``.
    """  # noqa: D205
    name = state.get("command")
    if name is None and text.strip().lower() == RESET_COMMAND:
        name = "reset"
    if name is None:
        return None
    if name not in COMMANDS:
        raise BadCommand(f"unknown command {name!r}; the commands are {', '.join(COMMANDS)}")
    topic_id = state.get("topic_id")
    if name == "reopen" and not topic_id:
        raise BadCommand("the reopen command needs the topic_id of the topic to go back to")
    if name == "remind":
        if not state.get("reminder_id"):
            raise BadCommand("the remind command needs the reminder_id of a reminder that fell due")
        return {"command": name, "reminder_id": state.get("reminder_id")}
    return {"command": name, "topic_id": topic_id}


def step_key(runtime: Runtime[KeelContext], what: str) -> str:
    """A key for a row this step makes: the same when the same step of the same run is replayed."""
    info = runtime.execution_info
    task = info.task_id if info is not None and info.task_id else str(uuid.uuid4())
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"keel:{conversation_id(runtime)}:{what}:{task}"))


def reply_key(runtime: Runtime[KeelContext], what: str) -> str:
    """The id of the reply a command's turn ends with (and of a reset's row in the log)."""
    return f"{conversation_id(runtime)}:{what}:{step_key(runtime, what)}"


def command_done(reply: str, runtime: Runtime[KeelContext], what: str) -> dict[str, Any]:
    """The update that ends a command's turn with ``reply``, dropping whatever waited."""
    message = AIMessage(reply, id=reply_key(runtime, what))
    return {
        "window": unstreamed([RemoveMessage(id=REMOVE_ALL_MESSAGES), message]),
        "messages": unstreamed([message]),
        "pending_question": None,
        **turn_start(agent_state=AgentState.RESPONSE.value, turn_over=True),
    }
