r"""The markers keel's messages carry, shared by the graph and the rule-based model.

The DONE marker is how the assistant says a task is really finished: a reply is finished when one
of its lines matches it (default ``^\s*KEEL DONE:``, case-insensitive; ``KEEL_DONE_MARKER``
changes it).
The product's name before DONE keeps prose apart from it: a reply line "Done: I saved the task."
is the reply's own text, never the marker.
The marker line is for the graph, not for the user: every model keel calls is a ``DoneLinesOut``,
which takes it out of the model's answer as it arrives (``DoneLines``). The nudge prefix and the
resume and synthetic flags mark the messages keel itself writes for the model.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from functools import lru_cache
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.chat_models import agenerate_from_stream
from langchain_core.messages import AIMessageChunk, BaseMessage
from langchain_core.messages.tool import tool_call_chunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult

DEFAULT_DONE_MARKER = r"^\s*KEEL DONE:"
DONE_KEY = "keel_done"
"""``response_metadata`` key of an assistant message whose DONE line was taken out."""
NUDGE_PREFIX = "Not finished yet."
"""The start of the reminder the response node sends when an answer did not finish the task."""
RESUME_KWARG = "keel_resume"
"""additional_kwargs key of a resume's continuation message: the steps still open."""
SYNTHETIC = "keel_synthetic"
"""additional_kwargs flag of messages keel writes for the model only (never logged)."""
_LINE_END = re.compile(r"\r\n|\r|\n")
"""Real line ends only: ``str.splitlines`` would also break at U+2028, U+0085 and friends, so a
"KEEL DONE:" after one of those would hide the rest of a reply."""


def lines(text: str) -> list[str]:
    """``text`` split at its line ends: LF, CRLF, CR."""
    return _LINE_END.split(text)


@lru_cache(maxsize=16)
def _compile(marker: str) -> re.Pattern[str]:
    return re.compile(marker, re.IGNORECASE)


def has_done(text: str, marker: str = DEFAULT_DONE_MARKER) -> bool:
    """Some line of ``text`` matches the DONE marker."""
    pattern = _compile(marker)
    return any(pattern.search(line) for line in lines(text))


class DoneLines:
    """The text of one message, passed on as it arrives, without the lines that mark it done.

    A line is held back until it is complete (the marker may need the whole line); blank lines at
    the start and between kept lines are kept only when more text follows, so the pieces joined
    are the text's other lines, stripped. ``done`` tells whether a DONE line went by.
    """

    def __init__(self, marker: str = DEFAULT_DONE_MARKER) -> None:
        """Filter with ``marker``."""
        self.pattern = _compile(marker)
        self.pending = ""
        self.blank = 0
        self.started = False
        self.done = False

    def feed(self, text: str) -> list[str]:
        """The pieces of text that may be shown now."""
        buffer = self.pending + text
        held = "\r" if buffer.endswith("\r") else ""  # a CRLF may be split across two pieces
        *complete, rest = _LINE_END.split(buffer[: len(buffer) - len(held)])
        self.pending = rest + held
        return [piece for line in complete if (piece := self._line(line))]

    def flush(self) -> list[str]:
        """The last line, unless it is the DONE line."""
        rest, self.pending = self.pending.rstrip("\r"), ""
        piece = self._line(rest) if rest.strip() else ""
        return [piece] if piece else []

    def _line(self, line: str) -> str:
        if self.pattern.search(line):
            self.done = True
            return ""
        if not line.strip():
            self.blank += self.started
            return ""
        piece = "\n" * (self.blank + self.started) + line
        self.started, self.blank = True, 0
        return piece


def as_chunk(message: BaseMessage) -> AIMessageChunk:
    """``message`` as an ``AIMessageChunk`` (its tool calls as tool-call chunks)."""
    if isinstance(message, AIMessageChunk):
        return message
    calls = getattr(message, "tool_calls", None) or []
    return AIMessageChunk(
        content=message.content,
        tool_call_chunks=[
            tool_call_chunk(name=c["name"], args=json.dumps(c["args"]), id=c.get("id"), index=i)
            for i, c in enumerate(calls)
        ],
        response_metadata=message.response_metadata,
        usage_metadata=getattr(message, "usage_metadata", None),
    )


async def stream_without_done(
    parts: AsyncIterator[BaseMessage], message_id: str | None, marker: str = DEFAULT_DONE_MARKER
) -> AsyncIterator[ChatGenerationChunk]:
    """The streamed ``parts`` of one answer under ``message_id``, without its DONE lines.

    The last chunk is marked ``keel_done`` when a DONE line went by. A whole answer arriving as one
    part is passed on line by line.
    """
    lines = DoneLines(marker)
    async for part in parts:
        chunk = as_chunk(part)
        first, *more = lines.feed(chunk.text) or [""]
        yield ChatGenerationChunk(
            message=chunk.model_copy(update={"content": first, "id": message_id})
        )
        for piece in more:
            yield ChatGenerationChunk(message=AIMessageChunk(content=piece, id=message_id))
    rest = "".join(lines.flush())
    meta = {DONE_KEY: True} if lines.done else {}
    last = AIMessageChunk(
        content=rest, id=message_id, response_metadata=meta, chunk_position="last"
    )
    yield ChatGenerationChunk(message=last)


def result_without_done(
    result: ChatResult, message_id: str | None, marker: str = DEFAULT_DONE_MARKER
) -> ChatResult:
    """``result`` (one answer, not streamed) under ``message_id``, without its DONE lines."""
    generation = result.generations[0]
    message = generation.message
    lines = DoneLines(marker)
    text = "".join([*lines.feed(message.text), *lines.flush()])
    meta = {**message.response_metadata, **({DONE_KEY: True} if lines.done else {})}
    update = {"content": text, "id": message_id, "response_metadata": meta}
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
        async for chunk in stream_without_done(parts, message_id, done_marker):
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
        return result_without_done(result, message_id, done_marker)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        raise NotImplementedError("keel's graph calls its models asynchronously")
