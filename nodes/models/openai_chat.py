"""keel's OpenAI chat model: ``ChatOpenAI`` that takes its DONE line out and names its failures.

Imported only when an API key is set (``keel.nodes.models.chat.build_agent_model``). Streamed or
not, the answer comes back under the ``message_id`` the assistant node gives, without the line that
matches ``done_marker`` (marked ``keel_done`` instead), so no client ever sees it; a provider's
failure comes out as ``ContextLengthExceeded`` (the graph resumes in a fresh window) or
``ProviderFailed`` (the rule-based model answers instead). A compatible server (``base_url`` set) is
sent the output bound as ``max_tokens``, the name every OpenAI-compatible server reads; OpenAI
itself gets ``max_completion_tokens``. A call may show the model its own tool schemas
(``shown_tools``) in place of the bound ones. An assistant message with tool calls is sent with
content ``""`` rather than null, which llama-cpp-python's server refuses. A cancelled call closes
its HTTP request, so the server stops generating.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult
from langchain_openai import ChatOpenAI
from typing_extensions import override

from keel.nodes.models.answers import DoneLinesOut
from keel.nodes.models.chat import classified
from keel.nodes.models.declared import SHOWN_TOOLS


class KeelChatOpenAI(DoneLinesOut, ChatOpenAI):
    """``ChatOpenAI`` whose answers carry no DONE line and whose failures are classified."""

    @override
    def _get_request_payload(
        self, input_: LanguageModelInput, *, stop: list[str] | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        shown = kwargs.pop(SHOWN_TOOLS, None)
        payload = super()._get_request_payload(input_, stop=stop, **kwargs)
        if shown is not None:  # this call shows the model these, the bound ones still run
            payload["tools"] = shown
        if self.openai_api_base and "max_completion_tokens" in payload:
            payload["max_tokens"] = payload.pop("max_completion_tokens")
        for message in payload.get("messages", ()):
            if message.get("tool_calls") and message.get("content") is None:
                message["content"] = ""  # some servers refuse null beside tool calls
        return payload

    @override
    async def _answer_parts(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None,
        run_manager: AsyncCallbackManagerForLLMRun | None,
        **kwargs: Any,
    ) -> AsyncIterator[BaseMessage]:
        try:
            async for chunk in ChatOpenAI._astream(self, messages, stop, run_manager, **kwargs):
                yield chunk.message
        except Exception as exc:
            raise classified(exc) from exc

    @override
    async def _answer(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None,
        run_manager: AsyncCallbackManagerForLLMRun | None,
        **kwargs: Any,
    ) -> ChatResult:
        try:
            return await ChatOpenAI._agenerate(self, messages, stop, run_manager, **kwargs)
        except Exception as exc:
            raise classified(exc) from exc
