"""A turn's messages as the offline model reads them: the request, and what already ran.

The last human message that is no nudge is the turn's request (a resume's continuation asks for
the steps still open); the tool calls after it with their results are what the turn has done.
Used by the offline model's decision (``keel.nodes.models.decisions``) and by its taking over a
turn the provider failed in (``keel.nodes.models.takeover``).
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, ToolCall, ToolMessage

from keel.nodes.models.markers import NUDGE_PREFIX, RESUME_KWARG


def is_request(message: BaseMessage) -> bool:
    """A human message that asks something: not the nudge keel sends when a turn is unfinished."""
    return message.type == "human" and not message.text.startswith(NUDGE_PREFIX)


def request_text(message: BaseMessage) -> str:
    """The request a human message makes; a resume's continuation asks for the open steps."""
    remaining = message.additional_kwargs.get(RESUME_KWARG)
    if isinstance(remaining, list):
        return "; ".join(str(r) for r in remaining)
    return message.text


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
