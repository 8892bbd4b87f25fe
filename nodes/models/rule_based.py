"""The rule-based chat model: keel's offline default and the fallback behind OpenAI.

A real LangChain ``BaseChatModel``: it binds tools, emits tool calls and ends its answers with the
DONE marker. What it says is ``keel.nodes.models.decisions.decide``: statelessly from the
messages it is given, it understands the last request by the phrasings and examples its bound
tools declare, looks up the tasks named by what they are, and reports only what the tools
returned, in the words each tool declares.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, ClassVar

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from pydantic import ConfigDict

from keel.nodes.models.answers import DoneLinesOut
from keel.nodes.models.decisions import decide


class RuleBasedChatModel(DoneLinesOut):
    """An offline chat model that follows the todo decision table."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    tools: tuple[Any, ...] = ()
    """The bound tools: it only calls these, as their phrasings and replies say."""
    copies_keel: ClassVar[bool] = False  # its replies are keel's own: a task title is kept whole

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

    async def _answer_parts(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None,
        run_manager: AsyncCallbackManagerForLLMRun | None,
        **kwargs: Any,
    ) -> AsyncIterator[BaseMessage]:
        """Decide on the event loop: the decision table takes microseconds, a thread hop more."""
        yield decide(messages, self.tools)

    async def _answer(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None,
        run_manager: AsyncCallbackManagerForLLMRun | None,
        **kwargs: Any,
    ) -> ChatResult:
        """The decision as one answer."""
        return ChatResult(generations=[ChatGeneration(message=decide(messages, self.tools))])
