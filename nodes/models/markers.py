r"""The markers keel's messages carry, shared by the graph and the rule-based model.

The DONE marker is how the assistant says a task is really finished: a reply is finished when one of
its lines matches it (default ``^\s*KEEL DONE:``, case-insensitive; ``KEEL_DONE_MARKER`` changes
it). A marker a model wrote after text on the same line starts a line of its own (a small model
writes "Added it. KEEL DONE: added"): the marker's line is taken out, the text before stays. The
product's name before DONE keeps prose apart from it: a reply line "Done: I saved the task." is the
reply's own text, never the marker. The marker line is for the graph, not for the user: every model
keel calls is a ``DoneLinesOut``, which takes it out of the model's answer as it arrives
(``DoneLines``). The same filter reads a tool call the model wrote as text
(``keel.nodes.models.text_calls``) as the call it is, and, for any model but keel's offline one
(``copies_keel``), drops the lines of keel's own text it copied (``keel.nodes.models.notes``), so no
person sees either. The nudge prefix and the resume and synthetic flags mark the messages keel
itself writes for the model.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import AsyncIterator
from functools import lru_cache
from typing import Any, ClassVar

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.chat_models import agenerate_from_stream
from langchain_core.messages import AIMessageChunk, BaseMessage
from langchain_core.messages.tool import ToolCall, ToolCallChunk, tool_call_chunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult

from keel.nodes.models.notes import Echoes
from keel.nodes.models.text_calls import opens_call, read_calls

DEFAULT_DONE_MARKER = r"^\s*KEEL DONE:"
DONE_KEY = "keel_done"
"""``response_metadata`` key of an assistant message whose DONE line was taken out."""
UNUSABLE_CALL = "keel_unusable_call"
"""``response_metadata`` key of an answer whose text held a tool call keel could not use."""
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


_WORD_START = re.compile(r"\s(?=\S)")


def done_at(pattern: re.Pattern[str], line: str) -> int | None:
    """Where the DONE marker's line starts in ``line``: 0 when the line matches it, the start of
    a later word when the rest of the line from there matches it (a marker written after text),
    None when it has none.
    """  # noqa: D205
    if pattern.search(line):
        return 0
    for word in _WORD_START.finditer(line):
        if pattern.search(line[word.end() :]):
            return word.end()
    return None


def has_done(text: str, marker: str = DEFAULT_DONE_MARKER) -> bool:
    """Some line of ``text`` matches the DONE marker (or ends in it, after text)."""
    pattern = _compile(marker)
    return any(done_at(pattern, line) is not None for line in lines(text))


class DoneLines:
    """The text of one message, passed on as it arrives, without the lines that mark it done.

    A line is held back until it is complete (the marker may need the whole line); blank lines at
    the start and between kept lines are kept only when more text follows, so the pieces joined
    are the text's other lines, stripped. ``done`` tells whether a DONE line went by. Lines that
    copy keel's own text are dropped too (``Echoes``). With the bound ``tools`` given, a line that
    may open a tool call written as text is held with all that follows it until the end: ``calls``
    are then the calls read from it (the rest of the held text passed on as text), ``unusable``
    tells that it was shaped like a call keel cannot use (none of it is passed on).
    """

    def __init__(
        self, marker: str = DEFAULT_DONE_MARKER, tools: Any = None, echoes: bool = True
    ) -> None:
        """Filter with ``marker``; read tool calls written as text for ``tools``; drop the lines
        that copy keel's own text unless ``echoes`` is false.
        """  # noqa: D205
        self.pattern = _compile(marker)
        self.tools = tools or None
        self.echoes = Echoes() if echoes else None
        self.pending = ""
        self.held: list[str] | None = None
        self.blank = 0
        self.started = False
        self.done = False
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.unusable = False

    def feed(self, text: str) -> list[str]:
        """The pieces of text that may be shown now."""
        buffer = self.pending + text
        held = "\r" if buffer.endswith("\r") else ""  # a CRLF may be split across two pieces
        *complete, rest = _LINE_END.split(buffer[: len(buffer) - len(held)])
        self.pending = rest + held
        return [piece for line in complete if (piece := self._take(line))]

    def flush(self) -> list[str]:
        """The last line, unless it is the DONE line; then what was held, unless it was calls."""
        rest, self.pending = self.pending.rstrip("\r"), ""
        pieces = [piece] if rest.strip() and (piece := self._take(rest)) else []
        if self.held is None:
            return pieces
        held, self.held = self.held, None
        found = read_calls("\n".join(held), self.tools or ())  # before DONE lines are cut
        if not found.calls and not found.unusable:  # the DONE line may be what spoils it
            kept = [cut for line in held if (cut := self._before_done(line)) is line or cut]
            found = read_calls("\n".join(kept), self.tools or ())
            held = kept if not found.calls and not found.unusable else held
        self.calls, self.unusable = found.calls, found.unusable
        if self.unusable:
            return pieces
        shown = lines(found.prose) if self.calls else held
        return [*pieces, *(piece for line in shown if (piece := self._line(line)))]

    def _take(self, line: str) -> str:
        if self.held is not None:
            self.held.append(line)
            return ""
        if self.tools is not None and opens_call(line):
            self.held = [line]
            return ""
        return self._line(line)

    def _before_done(self, line: str) -> str:
        """``line`` up to the DONE marker's line (all of it when it has none); a marker after text
        on the line counts for a model that may copy keel's text (any but keel's own).
        """  # noqa: D205
        start = (
            done_at(self.pattern, line)
            if self.echoes is not None
            else (0 if self.pattern.search(line) else None)
        )
        if start is None:
            return line
        self.done = True
        return line[:start].rstrip()

    def _line(self, line: str) -> str:
        cut = self._before_done(line)
        if cut is not line and not cut.strip():
            return ""
        kept = self.echoes.clean(cut) if self.echoes is not None else cut
        if not kept.strip():
            self.blank += self.started and not line.strip()
            return ""
        piece = "\n" * (self.blank + self.started) + kept
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


def short_id(seed: str) -> str:
    """A tool call's id made from ``seed``: the same every time, short enough for any provider."""
    return "call_" + hashlib.sha256(seed.encode()).hexdigest()[:20]


def text_call_chunks(
    filtered: DoneLines, message_id: str | None, native: bool
) -> tuple[list[ToolCallChunk], dict[str, Any]]:
    """The tool calls ``filtered`` read from the answer's text (none beside calls the server
    parsed itself), and the metadata that marks the answer: done, or holding an unusable call.
    """  # noqa: D205
    meta: dict[str, Any] = {DONE_KEY: True} if filtered.done else {}
    if filtered.unusable and not native:
        meta[UNUSABLE_CALL] = True
    if native or not filtered.calls:
        return [], meta
    chunks = [
        tool_call_chunk(name=name, args=json.dumps(args), id=short_id(f"{message_id}:{i}"), index=i)
        for i, (name, args) in enumerate(filtered.calls)
    ]
    return chunks, meta


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
    calls, meta = text_call_chunks(filtered, message_id, native)
    last = AIMessageChunk(
        content=rest,
        id=message_id,
        response_metadata=meta,
        tool_call_chunks=calls,
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
    chunks, meta = text_call_chunks(filtered, message_id, bool(native))
    read = [
        ToolCall(name=c["name"] or "", args=json.loads(c["args"] or "{}"), id=c["id"])
        for c in chunks
    ]
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
