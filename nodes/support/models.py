"""The chat-model factory: OpenAI when a key is set, the rule-based model always behind it.

``build_agent_model(tools, api_key, model, base_url)`` returns a runnable with the tools bound: with
an API key (``OPENAI_API_KEY``), ``ChatOpenAI`` (``OPENAI_MODEL``, default gpt-4o-mini;
``OPENAI_BASE_URL`` honoured) with the rule-based model as fallback for any provider failure except
a context-length error, which is raised as ``ContextLengthExceeded`` so the graph can resume in a
fresh window; without a key, the rule-based model alone. Both take their DONE line out of their
answer themselves, as they produce it (``keel.nodes.support.markers``); any other model a run is
given is wrapped in ``WithoutDoneLines``, which does the same from outside. ``system_prompt`` is
what the assistant node puts first in every model call, made from the tools' declarations.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.language_models.chat_models import agenerate_from_stream
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.constants import TAG_NOSTREAM
from pydantic import ConfigDict

from keel.nodes.support.markers import DEFAULT_DONE_MARKER, DONE_KEY, has_done, stream_without_done
from keel.nodes.support.rule_model import RuleBasedChatModel
from keel.tools.spec import spec_of

DEFAULT_OPENAI_MODEL = "gpt-4o-mini"

PROMPT_RULES = """You are keel, an assistant that manages the user's todo list.
Rules:
- Read and change tasks only through the tools. Never claim a tool did something unless its
  result says so; if a tool returns an error, report that error as it is.
{tool_lines}- Context management: the "current conversation" section holds the most recent turns and
  matters most; "earlier context" is only relevant if it connects to the current message. When
  the user switches topic or corrects you, focus on the correction and drop the old topic. If you
  are not sure what the user refers to, ask instead of guessing.
- When everything the user asked for is handled, end your reply with one last line that starts
  with "DONE:" followed by a few words of summary. Never write "DONE:" while anything is left.
"""


def system_prompt(tools: Sequence[BaseTool]) -> str:
    """What the assistant node puts first in every model call: the rules and the tools' lines."""
    asking = [t.name for t in tools if spec_of(t).confirm]
    lines = [f"- {line}\n" for t in tools if (line := spec_of(t).prompt)]
    if asking:
        names = ", ".join(asking)
        lines.insert(0, f"- {names} ask the user for a yes first: just call them, keel asks.\n")
    return PROMPT_RULES.format(tool_lines="".join(lines))


AgentModel = Runnable[LanguageModelInput, AIMessage]


class ContextLengthExceeded(RuntimeError):
    """The provider refused the input as longer than the model's context window."""


class ProviderFailed(RuntimeError):
    """The provider failed for any other reason; the rule-based model answers instead."""


def is_context_length_error(exc: BaseException) -> bool:
    """The provider's error says the input was too long (OpenAI ``context_length_exceeded``)."""
    body = getattr(exc, "body", None)
    codes = {getattr(exc, "code", None)}
    if isinstance(body, dict):
        codes |= {body.get("code"), (body.get("error") or {}).get("code")}
    text = str(exc).lower()
    return "context_length_exceeded" in codes or "maximum context length" in text


def classified(exc: Exception) -> Exception:
    """A provider's failure as ContextLengthExceeded or ProviderFailed."""
    if is_context_length_error(exc):
        return ContextLengthExceeded(str(exc)[:300])
    return ProviderFailed(f"{type(exc).__name__}: {str(exc)[:300]}")


def openai_model(api_key: str, model: str, base_url: str | None, timeout: float) -> BaseChatModel:
    """Keel's ``ChatOpenAI`` (``KeelChatOpenAI``): one provider call and one retry at most."""
    from keel.nodes.support.openai_model import KeelChatOpenAI

    return KeelChatOpenAI(
        model=model,
        base_url=base_url,
        api_key=api_key,  # type: ignore[arg-type]
        max_retries=1,
        timeout=timeout,
    )


def build_title_model(
    api_key: str | None = None, model: str = DEFAULT_OPENAI_MODEL, base_url: str | None = None
) -> BaseChatModel | None:
    """A model that writes short topic titles (and plans missions), when an OpenAI key is given."""
    return openai_model(api_key, model, base_url, timeout=20) if api_key else None


def build_agent_model(
    tools: Sequence[BaseTool],
    api_key: str | None = None,
    model: str = DEFAULT_OPENAI_MODEL,
    base_url: str | None = None,
) -> AgentModel:
    """The model the assistant node calls, with ``tools`` bound: OpenAI when a key is given."""
    rule_based = RuleBasedChatModel().bind_tools(tools)
    if not api_key:
        return rule_based
    openai = openai_model(api_key, model, base_url, timeout=60)
    return openai.bind_tools(tools).with_fallbacks(
        [rule_based], exceptions_to_handle=(ProviderFailed,)
    )


def said_done(message: BaseMessage, marker: str = DEFAULT_DONE_MARKER) -> bool:
    """The assistant marked ``message`` done (its DONE line taken out, or still in the text)."""
    return bool(message.response_metadata.get(DONE_KEY)) or has_done(message.text, marker)


class WithoutDoneLines(BaseChatModel):
    """A model that keeps its DONE lines (one a run is given), with them taken out.

    The DONE line is for the graph, not for the user: no client, streaming tokens or reading the
    state, ever sees it. The inner model runs without callbacks (so nothing streams its raw
    tokens); this model streams the kept lines under the ``message_id`` it is invoked with and
    marks the message ``keel_done``. Invoke it with ``message_id=`` and ``done_marker=``, as
    keel's own models, which need no wrapper.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    inner: Any
    """The tool-bound model (``AgentModel``)."""

    @property
    def _llm_type(self) -> str:
        return "keel-without-done-lines"

    _inner_config: RunnableConfig = {"callbacks": [], "tags": [TAG_NOSTREAM]}

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        message_id: str | None = None,
        done_marker: str = DEFAULT_DONE_MARKER,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        parts = self.inner.astream(messages, config=self._inner_config)
        async for chunk in stream_without_done(parts, message_id, done_marker):
            yield chunk

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return await agenerate_from_stream(self._astream(messages, stop, run_manager, **kwargs))

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        raise NotImplementedError("keel's graph runs asynchronously")


def without_done_lines(model: AgentModel) -> AgentModel:
    """``model`` wrapped by ``WithoutDoneLines`` (unless it is already, or is the rule model)."""
    if isinstance(model, WithoutDoneLines | RuleBasedChatModel):
        return model
    return WithoutDoneLines(inner=model)
