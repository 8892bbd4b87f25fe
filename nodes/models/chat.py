"""The chat-model factory: OpenAI when a key is set, the rule-based model always behind it.

``build_agent_model(tools, api_key, model, base_url)`` returns a runnable with the tools bound
(``tool_choice="auto"`` sent explicitly: some compatible servers read a missing one as "none"):
with an API key (``OPENAI_API_KEY``), ``ChatOpenAI`` (``OPENAI_MODEL``, default gpt-4o-mini;
``OPENAI_BASE_URL`` honoured), each request bounded by a timeout and a number of retries; without
a key, the rule-based model alone. ``build_fallback_model`` is the rule-based model that the
assistant node turns to when the provider fails (``ProviderFailed``, with its reason, HTTP status
and a preview of its message) or answers nothing usable (``keel.nodes.models.model_call``); a
context-length error is raised as ``ContextLengthExceeded`` instead, so the graph can resume in a
fresh window. Both take their DONE line out of their
answer themselves, as they produce it (``keel.nodes.models.markers``); any other model a run is
given is wrapped in ``WithoutDoneLines``, which does the same from outside. ``system_prompt`` is
what the assistant node puts first in every model call, made from the tools' declarations.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.constants import TAG_NOSTREAM
from pydantic import ConfigDict

from keel.nodes.models.answers import DoneLinesOut
from keel.nodes.models.markers import DEFAULT_DONE_MARKER, DONE_KEY, has_done
from keel.nodes.models.rule_based import RuleBasedChatModel
from keel.tools.ask_user import ask_user
from keel.tools.spec import spec_of

DEFAULT_OPENAI_MODEL = "gpt-4o-mini"

PROMPT_RULES = """You are keel, who manages the user's todo list.
- Use the tools for every task. Claim only what their results say; report errors as they are.
{tool_lines}- The "current conversation" matters most; "earlier context" only where it
  connects to it. Follow the user's corrections and changes of topic. Not sure what the user
  means: ask.
"""


DONE_RULE = (
    "- When everything the user asked for is handled, end your reply with one last line that "
    'starts\n  with "KEEL DONE:" followed by a few words of summary. Never write "KEEL DONE:" '
    "while anything\n  is left.\n"
)
"""The DONE line asked for in the system prompt (``KEEL_DONE_RULE=in_prompt``, the default). A
small model told this up front writes the line at once instead of calling a tool: with
``after_results`` it is asked for after the tool results instead (``keel.nodes.models.notes``)."""

DoneRule = Literal["in_prompt", "after_results"]


def system_prompt(tools: Sequence[BaseTool], done_rule: DoneRule = "in_prompt") -> str:
    """What the assistant node puts first in every model call: the rules and the tools' lines
    (``ask_user``'s too: it is bound beside every tool list), and the DONE rule when it is asked
    for up front.
    """  # noqa: D205
    asking = [t.name for t in tools if spec_of(t).confirm]
    lines = [f"- {line}\n" for t in [*tools, ask_user] if (line := spec_of(t).prompt)]
    if asking:
        names = ", ".join(asking)
        lines.insert(0, f"- {names} ask the user for a yes themselves: just call them.\n")
    rules = PROMPT_RULES.format(tool_lines="".join(lines))
    return rules + DONE_RULE if done_rule == "in_prompt" else rules


AgentModel = Runnable[LanguageModelInput, AIMessage]


class ContextLengthExceeded(RuntimeError):
    """The provider refused the input as longer than the model's context window."""


class ProviderFailed(RuntimeError):
    """The provider failed for any other reason (or answered nothing usable); the rule-based
    model answers instead.
    """  # noqa: D205

    def __init__(self, reason: str, status: int | None = None, detail: str = "") -> None:
        """Name the failure: its ``reason``, the provider's HTTP ``status``, a preview."""
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.status = status
        self.detail = detail


DETAIL_CHARS = 100
"""The provider's error message is kept (and logged) as a preview of this many characters."""


def failure_of(exc: BaseException) -> ProviderFailed:
    """A provider's exception as a ``ProviderFailed``: timeout, http_<status>, connection_error."""
    status = getattr(exc, "status_code", None)
    name = type(exc).__name__
    if "Timeout" in name:
        reason = "timeout"
    elif isinstance(status, int):
        reason = f"http_{status}"
    elif "Connection" in name:
        reason = "connection_error"
    else:
        reason = "provider_error"
    body = getattr(exc, "body", None)
    said = body.get("message") if isinstance(body, dict) else None
    message = " ".join(str(said or getattr(exc, "message", None) or exc or name).split())
    detail = message if len(message) <= DETAIL_CHARS else message[: DETAIL_CHARS - 1] + "…"
    return ProviderFailed(reason, status if isinstance(status, int) else None, detail)


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
    if isinstance(exc, ContextLengthExceeded | ProviderFailed):
        return exc
    if is_context_length_error(exc):
        return ContextLengthExceeded(str(exc)[:300])
    return failure_of(exc)


DEFAULT_TIMEOUT_SECONDS = 30.0
DEFAULT_RETRIES = 1
DEFAULT_MAX_TOKENS = 1024


@dataclass(frozen=True)
class ModelLimits:
    """What bounds every provider request, and how freely the model samples."""

    timeout: float = DEFAULT_TIMEOUT_SECONDS
    """Seconds one request may take."""
    retries: int = DEFAULT_RETRIES
    """Retries of a request that failed or timed out."""
    max_tokens: int = DEFAULT_MAX_TOKENS
    """The longest answer, in tokens (a call may give its own)."""
    temperature: float | None = None
    """The sampling temperature sent with every request (None: the server's own default; a small
    local model calls its tools far more reliably at 0)."""
    streaming: bool = True
    """Answers are streamed as they are written; off, each comes whole (a server that cannot stream
    an answer that may call a tool: llama-cpp-python's function-calling format)."""


def openai_model(
    api_key: str, model: str, base_url: str | None, limits: ModelLimits = ModelLimits()
) -> BaseChatModel:
    """Keel's ``ChatOpenAI`` (``KeelChatOpenAI``), its requests bounded by ``limits``."""
    from keel.nodes.models.openai_chat import KeelChatOpenAI

    return KeelChatOpenAI(
        model=model,
        base_url=base_url,
        api_key=api_key,  # type: ignore[arg-type]
        max_retries=limits.retries,
        timeout=limits.timeout,
        max_completion_tokens=limits.max_tokens,
        temperature=limits.temperature,
        disable_streaming=not limits.streaming,
    )


def build_title_model(
    api_key: str | None = None,
    model: str = DEFAULT_OPENAI_MODEL,
    base_url: str | None = None,
    limits: ModelLimits = ModelLimits(),
) -> BaseChatModel | None:
    """A model that writes short topic titles (and plans missions), when an OpenAI key is given."""
    return openai_model(api_key, model, base_url, limits) if api_key else None


def build_agent_model(
    tools: Sequence[BaseTool],
    api_key: str | None = None,
    model: str = DEFAULT_OPENAI_MODEL,
    base_url: str | None = None,
    limits: ModelLimits = ModelLimits(),
) -> AgentModel:
    """The model the assistant node calls, with ``tools`` bound: OpenAI when a key is given."""
    if not api_key:
        return build_fallback_model(tools)
    chat = openai_model(api_key, model, base_url, limits)
    return chat.bind_tools(tools, tool_choice="auto")


def build_fallback_model(tools: Sequence[BaseTool]) -> AgentModel:
    """The offline rule-based model with ``tools`` bound: what answers when the provider fails."""
    return RuleBasedChatModel().bind_tools(tools)


def said_done(message: BaseMessage, marker: str = DEFAULT_DONE_MARKER) -> bool:
    """The assistant marked ``message`` done (its DONE line taken out, or still in the text)."""
    return bool(message.response_metadata.get(DONE_KEY)) or has_done(message.text, marker)


class WithoutDoneLines(DoneLinesOut):
    """A model that keeps its DONE lines (one a run is given), with them taken out.

    The DONE line is for the graph, not for the user: no client, streaming tokens or reading the
    state, ever sees it. The inner model runs without callbacks (so nothing streams its raw
    tokens); this model streams the kept lines under the ``message_id`` it is invoked with and
    marks the message ``keel_done`` (``DoneLinesOut``, as keel's own models).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    inner: Any
    """The tool-bound model (``AgentModel``)."""

    @property
    def _llm_type(self) -> str:
        return "keel-without-done-lines"

    _inner_config: RunnableConfig = {"callbacks": [], "tags": [TAG_NOSTREAM]}

    async def _answer_parts(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None,
        run_manager: AsyncCallbackManagerForLLMRun | None,
        **kwargs: Any,
    ) -> AsyncIterator[BaseMessage]:
        async for part in self.inner.astream(messages, config=self._inner_config, **kwargs):
            yield part


def without_done_lines(model: AgentModel) -> AgentModel:
    """``model`` wrapped by ``WithoutDoneLines`` (unless it takes its DONE lines out already)."""
    if isinstance(model, DoneLinesOut):
        return model
    return WithoutDoneLines(inner=model)
