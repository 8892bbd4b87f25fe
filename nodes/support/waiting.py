"""Where a turn stands with the calls that need a yes, read from its state alone.

``calls_to_run``: the window ends with the assistant's calls (none has run); ``waiting_calls``:
one of them needs a yes;
``ran_after_a_yes``: the window ends with the results of such calls (they were decided). The
questions about a message's calls are named by ``question_id`` in ``messages``, and the answers
typed to them are the user messages that follow the calls there (``answers_after``: the n-th
answers the n-th question). ``call_key`` names a tool call for the ledger and the log, the same in
every run of the turn. Used by user_input, tool_execution (``keel.nodes.support.confirming``), the
command nodes and the graph's routes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langchain_core.tools import BaseTool

from keel.nodes.state.machine import AgentState
from keel.nodes.state.schema import KeelState
from keel.tools.spec import confirmations

KEY_MAX_CHARS = 180
"""The longest key kept as it is (the ledger's and the log's key columns hold 200)."""


def call_key(message: AIMessage, call_id: str | None) -> str:
    """A tool call's key in the ledger and the log: its id within the assistant message.

    The message's id names the conversation, the turn and the round, so only a replay of the very
    same call matches; a provider's ids alone (``functions.create_todo_task:0``) repeat.
    """
    key = f"{message.id}:{call_id}" if message.id else call_id or ""
    if len(key) > KEY_MAX_CHARS:
        key = "sha256:" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()
    return key


def asks_first(message: AnyMessage | None, tools: Sequence[BaseTool]) -> bool:
    """``message`` is the assistant's, with a call that needs a yes before it runs."""
    if not isinstance(message, AIMessage) or not message.tool_calls:
        return False
    asking = confirmations(tools)
    return any(c["name"] in asking for c in message.tool_calls)


def calls_to_run(state: KeelState) -> AIMessage | None:
    """The assistant message whose calls none has run yet: the turn's window ends with it."""
    window = state.get("window") or []
    last = window[-1] if window else None
    return last if isinstance(last, AIMessage) and last.tool_calls else None


def waiting_calls(state: KeelState, tools: Sequence[BaseTool]) -> AIMessage | None:
    """The assistant message whose calls wait for a yes or no: the turn's window ends with it
    (none of its calls has run) and one of them needs a confirmation.
    """  # noqa: D205
    last = calls_to_run(state)
    return last if asks_first(last, tools) else None


def ran_after_a_yes(state: KeelState, tools: Sequence[BaseTool]) -> bool:
    """The turn's window ends with the results of calls of which one needed a yes: they were
    decided (run, or cancelled) and the turn goes on to its response.
    """  # noqa: D205
    window = state.get("window") or []
    if state.get("agent_state") != AgentState.TOOL_EXECUTION or not window:
        return False
    calls = next((m for m in reversed(window) if isinstance(m, AIMessage)), None)
    return isinstance(window[-1], ToolMessage) and asks_first(calls, tools)


def question_id(last: AIMessage, asked: int) -> str:
    """The id of the ``asked``-th question about ``last``'s calls in ``messages``."""
    return f"{call_key(last, 'confirmation')}:ask:{asked}"


def position(messages: Sequence[AnyMessage], last: AIMessage) -> int | None:
    """Where ``last`` is in ``messages`` (None: cut from the bounded list, or never there)."""
    return next((i for i, m in enumerate(messages) if m.id is not None and m.id == last.id), None)


def answers_after(messages: Sequence[AnyMessage], last: AIMessage) -> list[AnyMessage]:
    """The user messages of ``messages`` that answer the questions about ``last``'s calls: those
    after it; without it there, each that follows one of the questions.
    """  # noqa: D205
    at = position(messages, last)
    if at is not None:
        return [m for m in messages[at + 1 :] if m.type == "human"]
    prefix = f"{call_key(last, 'confirmation')}:ask:"
    return [
        m
        for before, m in zip(messages, messages[1:], strict=False)
        if m.type == "human" and (before.id or "").startswith(prefix)
    ]


def typed_answers(state: KeelState, last: AIMessage) -> list[str]:
    """The answers typed to the questions about ``last``'s calls, in order (``answers_after``)."""
    return [m.text for m in answers_after(state.get("messages") or [], last)]
