"""The rule-based chat model: keel's offline default and the fallback behind OpenAI.

A real LangChain ``BaseChatModel``: it binds tools, emits tool calls and ends its answers with the
DONE marker. It follows the phrasings its bound tools declare (``keel.tools.phrasings``),
statelessly from the messages it is given: the last human message is the request (a nudge only makes
it look again); tool results after it are what has been done. A task named by title is looked up
first, and "show more tasks" continues the list shown last (``keel.nodes.support.lookups``). It
reports only what the tools returned, in the words each tool declares.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, ToolCall, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from pydantic import ConfigDict

from keel.nodes.support.lookups import (
    LOOKUP_PREFIX,
    lookup,
    lookup_pages,
    next_page_offset,
    payload,
    resolve,
)
from keel.nodes.support.markers import (
    DEFAULT_DONE_MARKER,
    NUDGE_PREFIX,
    RESUME_KWARG,
    result_without_done,
    stream_without_done,
)
from keel.tools.calls import storable
from keel.tools.phrasings import Intent, parse_intents
from keel.tools.spec import spec_of


def help_text(tools: Sequence[BaseTool]) -> str:
    """What the model says it can do: each tool's example, in the tools' order."""
    examples = [e for t in tools if (e := spec_of(t).example)]
    if not examples:
        return "I have no tools to help with."
    listed = ", ".join(examples[:-1]) + " or " + examples[-1] if len(examples) > 1 else examples[0]
    return f"I can help with your todo list: {listed}."


def _request(message: BaseMessage) -> str:
    """The request a human message makes; a resume's continuation asks for the open steps."""
    remaining = message.additional_kwargs.get(RESUME_KWARG)
    if isinstance(remaining, list):
        return "; ".join(str(r) for r in remaining)
    return message.text


def _is_nudge(message: BaseMessage) -> bool:
    return message.type == "human" and message.text.startswith(NUDGE_PREFIX)


def _executed(after: Sequence[BaseMessage]) -> list[tuple[ToolCall, ToolMessage]]:
    results = {m.tool_call_id: m for m in after if isinstance(m, ToolMessage)}
    done = []
    for m in after:
        if isinstance(m, AIMessage):
            for call in m.tool_calls:
                if (call_id := call.get("id")) in results:
                    done.append((call, results[call_id or ""]))
    return done


def _call(intent: Intent, task_id: int | None, offset: int = 0) -> ToolCall:
    args = dict(intent.args)
    if task_id is not None:
        args["task_id"] = task_id
    if offset:
        args["offset"] = offset
    return ToolCall(
        name=intent.tool, args=storable(args), id=f"call_{uuid.uuid4().hex[:12]}", type="tool_call"
    )


def _describe(call: ToolCall, result: ToolMessage, tools: Sequence[BaseTool]) -> str:
    data = payload(result)
    tool_ = next((t for t in tools if t.name == call["name"]), None)
    words = spec_of(tool_).report(data) if isinstance(data, dict) else None
    return words if words is not None else str(result.content)


def decide(messages: Sequence[BaseMessage], tools: Sequence[BaseTool]) -> AIMessage:
    """The next assistant message for ``messages``: tool calls, or a final answer with DONE.

    Only ``tools`` are called, recognised by their phrasings and reported in their words.
    """
    humans = [i for i, m in enumerate(messages) if m.type == "human" and not _is_nudge(m)]
    if not humans:
        return AIMessage(f"{help_text(tools)}\nDONE: explained what I can do")
    start = humans[-1]
    intents = parse_intents(_request(messages[start]), tools)
    if not intents:
        return AIMessage(f"{help_text(tools)}\nDONE: explained what I can do")
    executed = _executed(messages[start + 1 :])
    looked_up = lookup_pages(executed)
    seen = [
        (c["name"], c["args"])
        for c, _ in executed
        if not (c.get("id") or "").startswith(LOOKUP_PREFIX)
    ]
    calls: list[ToolCall] = []
    notes: list[str] = []
    lookups: dict[str, int] = {}
    for intent in intents:
        task_id = intent.task_id
        if intent.needs_lookup:
            ref = intent.ref or ""
            if ref not in looked_up:
                lookups.setdefault(ref, 0)
                continue
            found = resolve(ref, looked_up[ref])
            if found.next_offset is not None:
                lookups.setdefault(ref, found.next_offset)
                continue
            if found.task_id is None:
                notes.append(found.note or f"I couldn't find a task called '{ref}'.")
                continue
            task_id = found.task_id
        offset = next_page_offset(messages[:start]) if intent.more else 0
        call = _call(intent, task_id, offset)
        if (call["name"], call["args"]) in seen:
            seen.remove((call["name"], call["args"]))
            continue
        calls.append(call)
    calls += [lookup(ref, offset) for ref, offset in lookups.items()]
    if calls:
        return AIMessage("", tool_calls=calls)
    lines = [
        _describe(c, r, tools)
        for c, r in executed
        if not (c.get("id") or "").startswith(LOOKUP_PREFIX)
    ]
    lines += notes
    return AIMessage("\n".join(lines) + f"\nDONE: answered {len(intents)} request(s)")


class RuleBasedChatModel(BaseChatModel):
    """An offline chat model that follows the todo decision table."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    tools: tuple[Any, ...] = ()
    """The bound tools: it only calls these, as their phrasings and replies say."""

    @property
    def _llm_type(self) -> str:
        return "keel-rule-based"

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Return a copy that may call ``tools`` (keel tools: others have no phrasings)."""
        return self.model_copy(update={"tools": tuple(t for t in tools if isinstance(t, BaseTool))})

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        *,
        message_id: str | None = None,
        done_marker: str = DEFAULT_DONE_MARKER,
        **kwargs: Any,
    ) -> ChatResult:
        """Decide; the answer comes back under ``message_id``, its DONE line taken out."""
        message = decide(messages, self.tools)
        result = ChatResult(generations=[ChatGeneration(message=message)])
        return result_without_done(result, message_id, done_marker)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        """Decide on the event loop: the decision table takes microseconds, a thread hop more."""
        return self._generate(messages, stop, **kwargs)

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        *,
        message_id: str | None = None,
        done_marker: str = DEFAULT_DONE_MARKER,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        """The answer line by line, for a caller that streams, its DONE line taken out."""

        async def whole() -> AsyncIterator[BaseMessage]:
            yield decide(messages, self.tools)

        async for chunk in stream_without_done(whole(), message_id, done_marker):
            yield chunk
