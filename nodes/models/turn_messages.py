"""A turn's messages as the offline model reads them: the request, and what already ran.

The last human message that is no nudge is the turn's request (a resume's continuation asks for
the steps still open); the tool calls after it with their results are what the turn has done, and
a call asking for one of them again is a repeat (``repeats``).
Used by the offline model's decision (``keel.nodes.models.decisions``) and by its taking over a
turn the provider failed in (``keel.nodes.models.takeover``).
"""

from __future__ import annotations

from collections.abc import Container, Sequence

from langchain_core.messages import AIMessage, BaseMessage, ToolCall, ToolMessage

from keel.nodes.models.markers import RESUME_KWARG
from keel.nodes.models.notes import NUDGE_PREFIX


def is_request(message: BaseMessage) -> bool:
    """A human message that asks something: not the nudge keel sends when a turn is unfinished."""
    return message.type == "human" and not message.text.startswith(NUDGE_PREFIX)


def request_text(message: BaseMessage) -> str:
    """The request a human message makes; a resume's continuation asks for the open steps."""
    remaining = message.additional_kwargs.get(RESUME_KWARG)
    if isinstance(remaining, list):
        return "; ".join(str(r) for r in remaining)
    return message.text


def this_turn(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The messages after the turn's request (all of them when there is none)."""
    starts = [i for i, m in enumerate(messages) if is_request(m)]
    return list(messages[starts[-1] + 1 :]) if starts else list(messages)


def repeats(
    messages: Sequence[BaseMessage], calls: Sequence[ToolCall], mutating: Container[str]
) -> list[ToolCall]:
    """The ``calls`` that ask again for a step the turn already took: the same tool with the same
    arguments, with no tool in ``mutating`` run since (after a change, reading again is new).
    """  # noqa: D205
    done = ran(this_turn(messages))
    again = []
    for call in calls:
        for i, (earlier, _) in enumerate(done):
            changed = any(c["name"] in mutating for c, _ in done[i + 1 :])
            if earlier["name"] == call["name"] and earlier["args"] == call["args"] and not changed:
                again.append(call)
                break
    return again


def ran(messages: Sequence[BaseMessage]) -> list[tuple[ToolCall, ToolMessage]]:
    """The tool calls among ``messages`` that have their results, with them, in order."""
    results = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    return [
        (call, results[call.get("id") or ""])
        for m in messages
        if isinstance(m, AIMessage)
        for call in m.tool_calls
        if call.get("id") in results
    ]
