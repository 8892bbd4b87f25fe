"""keel's chat models, whose answers never carry their DONE line: ``DoneLinesOut``.

Every model keel calls in a turn is one: the OpenAI model, the rule-based model, and
``WithoutDoneLines`` around any other. Each answer, streamed or whole, goes through
``keel.nodes.models.markers.DoneLines``: the DONE line out, tool calls written as text read as
calls, keel's own text a model copied dropped.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator
from typing import Any, ClassVar

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.chat_models import agenerate_from_stream
from langchain_core.messages import AIMessageChunk, BaseMessage
from langchain_core.messages.tool import ToolCall, ToolCallChunk, tool_call_chunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult

from keel.nodes.models.markers import DEFAULT_DONE_MARKER, DONE_KEY, UNUSABLE_CALL, DoneLines


def as_chunk(message: BaseMessage) -> AIMessageChunk:
    """``message`` as an ``AIMessageChunk`` (its tool calls as tool-call chunks)."""
    if isinstance(message, AIMessageChunk):
        return message
    calls = getattr(message, "tool_calls", None) or []
    return AIMessageChunk(
        content=message.content,
        tool_call_chunks=as_chunks(calls),
        response_metadata=message.response_metadata,
        usage_metadata=getattr(message, "usage_metadata", None),
    )


def short_id(seed: str) -> str:
    """A tool call's id made from ``seed``: the same every time, short enough for any provider."""
    return "call_" + hashlib.sha256(seed.encode()).hexdigest()[:20]


def text_calls(
    filtered: DoneLines, message_id: str | None, native: bool
) -> tuple[list[ToolCall], dict[str, Any]]:
    """The tool calls ``filtered`` read from the answer's text (none beside calls the server
    parsed itself), and the metadata that marks the answer: done, or holding an unusable call.
    """  # noqa: D205
    meta: dict[str, Any] = {DONE_KEY: True} if filtered.done else {}
    if filtered.unusable and not native:
        meta[UNUSABLE_CALL] = True
    if native:
        return [], meta
    calls = [
        ToolCall(name=name, args=args, id=short_id(f"{message_id}:{i}"))
        for i, (name, args) in enumerate(filtered.calls)
    ]
    return calls, meta


def as_chunks(calls: list[ToolCall]) -> list[ToolCallChunk]:
    """``calls`` as the tool-call chunks of a streamed answer."""
    return [
        tool_call_chunk(name=c["name"], args=json.dumps(c["args"]), id=c["id"], index=i)
        for i, c in enumerate(calls)
    ]


async def stream_without_done(
    parts: AsyncIterator[BaseMessage],
    message_id: str | None,
    marker: str = DEFAULT_DONE_MARKER,
    tools: Any = None,
    echoes: bool = True,
) -> AsyncIterator[ChatGenerationChunk]:
    """The streamed ``parts`` of one answer under ``message_id``, without its DONE lines.

    The last chunk is marked ``keel_done`` when a DONE line went by, and carries the tool calls
    written as text for the bound ``tools``. A whole answer arriving as one part is passed on line
    by line.
    """
    filtered = DoneLines(marker, tools, echoes)
    native = False
    async for part in parts:
        chunk = as_chunk(part)
        native = native or bool(chunk.tool_call_chunks)
        first, *more = filtered.feed(chunk.text) or [""]
        yield ChatGenerationChunk(
            message=chunk.model_copy(update={"content": first, "id": message_id})
        )
        for piece in more:
            yield ChatGenerationChunk(message=AIMessageChunk(content=piece, id=message_id))
    rest = "".join(filtered.flush())
    calls, meta = text_calls(filtered, message_id, native)
    last = AIMessageChunk(
        content=rest,
        id=message_id,
        response_metadata=meta,
        tool_call_chunks=as_chunks(calls),
        chunk_position="last",
    )
    yield ChatGenerationChunk(message=last)


def result_without_done(
    result: ChatResult,
    message_id: str | None,
    marker: str = DEFAULT_DONE_MARKER,
    tools: Any = None,
    echoes: bool = True,
) -> ChatResult:
    """``result`` (one answer, not streamed) under ``message_id``, without its DONE lines, with
    the tool calls written as text for the bound ``tools`` as calls.
    """  # noqa: D205
    generation = result.generations[0]
    message = generation.message
    filtered = DoneLines(marker, tools, echoes)
    text = "".join([*filtered.feed(message.text), *filtered.flush()])
    native = list(getattr(message, "tool_calls", None) or [])
    read, meta = text_calls(filtered, message_id, bool(native))
    update: dict[str, Any] = {
        "content": text,
        "id": message_id,
        "response_metadata": {**message.response_metadata, **meta},
    }
    if read:
        update["tool_calls"] = read
    kept = ChatGeneration(
        message=message.model_copy(update=update), generation_info=generation.generation_info
    )
    return ChatResult(generations=[kept], llm_output=result.llm_output)


class DoneLinesOut(BaseChatModel):
    """A chat model whose answers never carry their DONE line: keel's one filter of it.

    Every model keel calls in a turn is one (the OpenAI model, the rule-based model, and
    ``WithoutDoneLines`` around any other). A subclass answers in ``_answer_parts`` (the answer as
    it arrives) and ``_answer`` (whole; by default the parts put together); this class takes the
    line matching ``done_marker`` out, under the ``message_id`` the call gives, and marks the
    message ``keel_done``, so no client, streamed token or state ever shows the line.
    """

    copies_keel: ClassVar[bool] = True
    """The model may copy keel's own text (its notes, its framing): such lines are dropped."""

    def _answer_parts(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None,
        run_manager: AsyncCallbackManagerForLLMRun | None,
        **kwargs: Any,
    ) -> AsyncIterator[BaseMessage]:
        """The answer's parts as the model makes them, DONE line and all."""
        raise NotImplementedError

    async def _answer(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None,
        run_manager: AsyncCallbackManagerForLLMRun | None,
        **kwargs: Any,
    ) -> ChatResult:
        """The whole answer, DONE line and all."""
        parts = self._answer_parts(messages, stop, run_manager, **kwargs)
        return await agenerate_from_stream(
            ChatGenerationChunk(message=as_chunk(m)) async for m in parts
        )

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
        parts = self._answer_parts(messages, stop, run_manager, **kwargs)
        tools = kwargs.get("tools")
        echoes = self.copies_keel
        async for chunk in stream_without_done(parts, message_id, done_marker, tools, echoes):
            yield chunk

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        *,
        message_id: str | None = None,
        done_marker: str = DEFAULT_DONE_MARKER,
        **kwargs: Any,
    ) -> ChatResult:
        result = await self._answer(messages, stop, run_manager, **kwargs)
        return result_without_done(
            result, message_id, done_marker, kwargs.get("tools"), self.copies_keel
        )

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        raise NotImplementedError("keel's graph calls its models asynchronously")
