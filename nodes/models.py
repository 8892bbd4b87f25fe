"""The chat-model factory: OpenAI when a key is set, the rule-based model always behind it.

``build_agent_model(tools)`` returns a runnable with the tools bound: with ``OPENAI_API_KEY`` set,
``ChatOpenAI`` (``OPENAI_MODEL``, default gpt-4o-mini; ``OPENAI_BASE_URL`` honoured) with the
rule-based model as fallback for any provider failure except a context-length error, which is
raised as ``ContextLengthExceeded`` so the graph can resume in a fresh window; without a key, the
rule-based model alone. ``SYSTEM_PROMPT`` is what the
assistant node puts first in every model call.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage
from langchain_core.runnables import Runnable, RunnableLambda
from langchain_core.tools import BaseTool

from nodes.rule_model import RuleBasedChatModel

DEFAULT_OPENAI_MODEL = "gpt-4o-mini"

SYSTEM_PROMPT = """You are keel, an assistant that manages the user's todo list.
Rules:
- Read and change tasks only through the tools. Never claim a task was created, renamed,
  completed or deleted unless a tool result says so; if a tool returns an error, report that
  error as it is.
- Deleting or renaming a task asks the user for confirmation; just call the tool, keel asks.
- A task named by title: call list_todo_tasks first to find its id.
- Context management: the "current conversation" section holds the most recent turns and matters
  most; "earlier context" is only relevant if it connects to the current message. When the user
  switches topic or corrects you, focus on the correction and drop the old topic. If you are not
  sure what the user refers to, ask instead of guessing.
- When everything the user asked for is handled, end your reply with one last line that starts
  with "DONE:" followed by a few words of summary. Never write "DONE:" while anything is left.
"""

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


def classify_errors(model: AgentModel) -> AgentModel:
    """Wrap ``model`` so its failures are ContextLengthExceeded or ProviderFailed."""

    def classified(exc: Exception) -> Exception:
        if is_context_length_error(exc):
            return ContextLengthExceeded(str(exc)[:300])
        return ProviderFailed(f"{type(exc).__name__}: {str(exc)[:300]}")

    def call(messages: LanguageModelInput) -> AIMessage:
        try:
            return model.invoke(messages)
        except Exception as exc:
            raise classified(exc) from exc

    async def acall(messages: LanguageModelInput) -> AIMessage:
        try:
            return await model.ainvoke(messages)
        except Exception as exc:
            raise classified(exc) from exc

    return RunnableLambda(call, afunc=acall, name="openai")


def build_title_model(env: Mapping[str, str] | None = None) -> BaseChatModel | None:
    """A model that writes short topic titles, when an OpenAI key is set."""
    env = os.environ if env is None else env
    if not env.get("OPENAI_API_KEY"):
        return None
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        model=env.get("OPENAI_MODEL") or DEFAULT_OPENAI_MODEL,
        base_url=env.get("OPENAI_BASE_URL") or None,
        api_key=env["OPENAI_API_KEY"],  # type: ignore[arg-type]
        max_retries=1,
        timeout=20,
    )


def build_agent_model(
    tools: Sequence[BaseTool], env: Mapping[str, str] | None = None
) -> AgentModel:
    """The model the assistant node calls, with ``tools`` bound."""
    env = os.environ if env is None else env
    rule_based = RuleBasedChatModel().bind_tools(tools)
    api_key = env.get("OPENAI_API_KEY")
    if not api_key:
        return rule_based
    from langchain_openai import ChatOpenAI

    openai = ChatOpenAI(
        model=env.get("OPENAI_MODEL") or DEFAULT_OPENAI_MODEL,
        base_url=env.get("OPENAI_BASE_URL") or None,
        api_key=api_key,  # type: ignore[arg-type]
        max_retries=1,
        timeout=60,
    )
    primary = classify_errors(openai.bind_tools(tools))
    return primary.with_fallbacks([rule_based], exceptions_to_handle=(ProviderFailed,))
