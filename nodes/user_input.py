"""The user_input node: a user message arrives; it answers a waiting question or starts a turn.

A command (the input's ``command``, or the message ``/reset`` typed) is no message: user_input
hands it on (``command``, ``topic_id``) to the node that carries it out, ``reset_conversation`` or
``reopen_topic``, whatever waits; a confirmation waiting for yes or no is dropped there, never
answered. The message is the input's ``content`` (keel's clients, Studio's form) or else the newest
user message of ``messages`` (LangGraph's chat clients); it joins ``messages``. While destructive
tool calls wait for their confirmation (the window ends with them, none run), a message is the
answer: it follows the question in ``messages`` and the graph goes back to tool_execution with it.
This is how a plain new input on a paused thread answers it, for any client; ``Command(resume=...)``
does the same without a new input. With no new message at all (the graph around the turn runs it
again once the model's calls, or the results of calls decided by a yes, are checkpointed:
``keel.graphs.builder.served``) it goes straight on to them (to ask first, when one needs a yes),
or to the response that follows them. Otherwise a new turn begins
(USER_INPUT): a fresh window holding only the message (earlier turns live in the message log), the
per-turn counters reset, the turn counted. The turn gets its key (``keel.nodes.state.lineage``),
which names its message: a re-run writes the same message, never a second one, and a turn forked
from an earlier checkpoint writes its own. The turn's time budget (``turn_seconds``) starts here,
for a new turn and for the answer to a confirmation.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import structlog
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.runtime import Runtime

from keel.checkpoints.branches import BEGINNING, CheckpointNotKept
from keel.nodes.run_context import KeelContext, conversation_id
from keel.nodes.state.commands import step_key, turn_command
from keel.nodes.state.lineage import next_turn_key, starting
from keel.nodes.state.machine import AgentState
from keel.nodes.state.reducers import unstreamed
from keel.nodes.state.schema import KeelState, bump, turn_start
from keel.nodes.support.answers import AGAIN, Asked
from keel.nodes.support.confirming import ask
from keel.nodes.support.message_log import user_message_id
from keel.nodes.support.previews import preview
from keel.nodes.support.waiting import (
    answers_after,
    calls_to_run,
    position,
    question_id,
    ran_after_a_yes,
    waiting_calls,
)

log = structlog.get_logger(__name__)


def said(state: KeelState) -> tuple[str, bool]:
    """The text of this run's message, and whether it came as the input's ``content`` (to be
    added to ``messages``), not as the newest user message of ``messages`` (there already).
    """  # noqa: D205
    content = state.get("content")
    if content is not None:
        return content, True
    newest = next((m for m in reversed(state.get("messages") or []) if m.type == "human"), None)
    return (newest.text if newest is not None else ""), False


def _goes_on(state: KeelState, as_content: bool, tools: Sequence[BaseTool]) -> bool:
    """No new input (no command, no message as ``content`` or last in ``messages``) and the turn
    stands at calls none of which has run, or at calls just decided: the graph runs it on.
    """  # noqa: D205
    messages = state.get("messages") or []
    if as_content or state.get("command") or (messages and messages[-1].type == "human"):
        return False
    return calls_to_run(state) is not None or ran_after_a_yes(state, tools)


async def user_input(state: KeelState, runtime: Runtime[KeelContext]) -> dict[str, Any]:
    """Hand a command on, take the message as the answer to a waiting question, or start a turn."""
    content, as_content = said(state)
    tools = runtime.context.resources.tools
    if _goes_on(state, as_content, tools):
        return {}  # no message: the turn goes on, to its calls (to ask first) or after them
    if (command := turn_command(state, content)) is not None:
        log.info("command_received", command=command["command"])
        typed = [HumanMessage(content, id=step_key(runtime, "command"))] if as_content else []
        return {**command, "messages": unstreamed(typed)} if content else command
    deadline = time.time() + runtime.context.turn_seconds  # the turn's time budget
    if (last := waiting_calls(state, tools)) is not None:
        log.info("confirmation_answered", message_preview=preview(content))
        return {
            "messages": unstreamed(
                await answering(state, runtime, last, content if as_content else None)
            ),
            "stop_requested": False,
            "turn_deadline": deadline,
        }
    if (turn := runtime.context.turn) is not None and turn.forked and not state.get("stats"):
        if turn.checkpoint_id not in (None, BEGINNING):  # pruned since it was checked:
            raise CheckpointNotKept(turn.checkpoint_id)  # LangGraph ran it from an empty state
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
        "request": content,
        "messages": unstreamed(
            [HumanMessage(content, id=user_message_id(runtime, started))] if as_content else []
        ),
        **started,
        **turn_start(agent_state=AgentState.USER_INPUT.value, turn_deadline=deadline),
    }


async def answering(
    state: KeelState, runtime: Runtime[KeelContext], last: AIMessage, content: str | None
) -> list[Any]:
    """``messages`` with every answer to ``last``'s questions after the question it answers, as it
    was put: the n-th user message after the calls follows the n-th question. The message came as
    ``content``: it is added; it came in ``messages``, it is there already (a chat client's
    stand-in results for the waiting calls go: theirs follow).
    """  # noqa: D205
    waiting = {c.get("id") for c in last.tool_calls}
    messages = [
        m
        for m in state.get("messages") or []
        if not (isinstance(m, ToolMessage) and m.tool_call_id in waiting)
    ]
    if content is not None:
        number = len(answers_after(messages, last)) + 1
        messages.append(HumanMessage(content, id=f"{question_id(last, number)}:answer"))
    at = position(messages, last)
    if at is None:  # the calls' message cut from the bounded list: the newest answer alone
        at = len(messages) - 2
    asked: Asked | None = None
    exchange: list[Any] = []
    for number, answer in enumerate((m for m in messages[at + 1 :] if m.type == "human"), 1):
        key = question_id(last, number)
        text = await runtime.context.resources.messages.content_of(conversation_id(runtime), key)
        if text is None:  # not put (yet): the question it would be
            asked = asked or await ask(last, runtime)
            text = asked.words(AGAIN if number > 1 else None) if asked.request else ""
        exchange += [AIMessage(text, id=key), answer]
    return [RemoveMessage(id=REMOVE_ALL_MESSAGES), *messages[: at + 1], *exchange]
