"""The offline model taking over a turn the provider failed in: it continues, it never repeats.

When the provider fails after tool calls of the turn already ran, the rule-based model must not
read the user's request afresh (it would add the task again, or list an empty list before the
task the turn just made). ``takeover`` splits the turn at the user's request: what the provider's
model had run (its calls with their results) counts against the requests the offline model
recognises, tool by tool, and only the requests left are given to it, with its own calls and
results of this turn. When nothing is left, no model is asked: the answer reports what ran.
``finished`` writes the final answer: what the provider's calls did, what the offline model says,
and one line telling the user that the offline assistant took over the turn.

Used by ``keel.nodes.models.model_call``; the offline replies carry ``OFFLINE`` in their metadata.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolCall, ToolMessage
from langchain_core.tools import BaseTool

from keel.nodes.models.markers import DONE_KEY
from keel.nodes.models.notes import FALLBACK_NOTE
from keel.nodes.models.turn_messages import is_request, ran, request_text
from keel.tools.calls import payload
from keel.tools.spec import spec_of, tool_named
from keel.tools.understanding.reading import parse_intents

OFFLINE = "keel_offline"
"""``response_metadata`` key of an answer the offline model gave in a turn that fell back."""


@dataclass
class Takeover:
    """What the offline model is given, and what the provider's model had already done."""

    messages: list[BaseMessage] | None
    """The offline model's input; None when nothing is left to do."""
    done: list[str] = field(default_factory=list)
    """What the provider's tool calls did, in the tools' words."""


def describe(
    call: ToolCall, result: ToolMessage, tools: Sequence[BaseTool], asked: str | None = None
) -> str:
    """What a tool call did, in its tool's words (its text when the tool declares none).

    ``asked`` is what the request asked about the result ("count"), for the words to answer.
    """
    data = payload(result)
    if not isinstance(data, dict):
        return str(result.content)
    if asked is not None:
        data = {**data, "asked": asked}
    words = spec_of(tool_named(tools, call["name"])).report(data)
    return words if words is not None else str(result.content)


def takeover(messages: Sequence[BaseMessage], tools: Sequence[BaseTool]) -> Takeover:
    """What the offline model continues from, in a turn whose provider failed."""
    requests = [i for i, m in enumerate(messages) if is_request(m)]
    if not requests:
        return Takeover(list(messages))
    start = requests[-1]
    after = list(messages[start + 1 :])
    first_offline = next(
        (i for i, m in enumerate(after) if m.response_metadata.get(OFFLINE)), len(after)
    )
    provider_ran = ran(after[:first_offline])
    if not provider_ran:
        return Takeover(list(messages))
    left = Counter(call["name"] for call, _ in provider_ran)
    remaining = []
    for intent in parse_intents(request_text(messages[start]), tools):
        if left[intent.tool]:
            left[intent.tool] -= 1
        else:
            remaining.append(intent.text)
    done = [describe(call, result, tools) for call, result in provider_ran]
    if not remaining:
        return Takeover(None, done)
    request = HumanMessage("; ".join(remaining), id=messages[start].id)
    return Takeover([*messages[:start], request, *after[first_offline:]], done)


def finished(reply: AIMessage | None, done: list[str], message_id: str) -> AIMessage:
    """The final answer of a turn the offline model finished: what ran, what it says, the note."""
    said = reply.text if reply is not None else ""
    text = "\n".join(part for part in (*done, said, FALLBACK_NOTE) if part)
    meta = {**(reply.response_metadata if reply is not None else {}), DONE_KEY: True, OFFLINE: True}
    return AIMessage(text, id=message_id, response_metadata=meta)
