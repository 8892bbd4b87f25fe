"""The rule-based chat model: keel's offline default and the fallback behind OpenAI.

A real LangChain ``BaseChatModel``: it binds tools, emits tool calls and ends its answers with the
DONE marker. What it says is ``keel.nodes.support.decisions.decide``: statelessly from the
messages it is given, it understands the last request by the phrasings and examples its bound
tools declare, looks up the tasks named by what they are, and reports only what the tools
returned, in the words each tool declares.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from pydantic import ConfigDict

from keel.nodes.support.decisions import decide
from keel.nodes.support.markers import (
    DEFAULT_DONE_MARKER,
    result_without_done,
    stream_without_done,
)


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
