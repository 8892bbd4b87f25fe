"""The settings of the chat model keel calls: which one, where, and how each request is made.

Fields of ``keel.graphs.settings.Settings`` (read from ``OPENAI_*`` and ``KEEL_*`` variables
like the rest); with no API key, keel runs its offline rule-based model.
"""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, BaseModel, Field

from keel.nodes.models.chat import (
    DEFAULT_OPENAI_MODEL,
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT_SECONDS,
    DoneRule,
)
from keel.nodes.support.planner import PlanMethod

ToolSchemas = Literal["full", "lean"]


def _openai(name: str) -> AliasChoices:
    return AliasChoices(f"OPENAI_{name}", f"KEEL_OPENAI_{name}")


class ModelSettings(BaseModel):
    """The chat model: OpenAI or a compatible server, and the shape of every request to it."""

    openai_api_key: str | None = Field(
        default=None,
        validation_alias=_openai("API_KEY"),
        description="Use OpenAI (``OPENAI_API_KEY``); unset: the offline rule-based model.",
    )
    openai_model: str = Field(default=DEFAULT_OPENAI_MODEL, validation_alias=_openai("MODEL"))
    openai_base_url: str | None = Field(
        default=None,
        validation_alias=_openai("BASE_URL"),
        description="An OpenAI-compatible endpoint (``OPENAI_BASE_URL``).",
    )
    model_timeout_seconds: float = Field(
        default=DEFAULT_TIMEOUT_SECONDS,
        gt=0,
        description="Longest wait for one model request; then it is retried or given up.",
    )
    model_retries: int = Field(
        default=DEFAULT_RETRIES,
        ge=0,
        le=5,
        description="Retries of a model request that failed or timed out, before the fallback.",
    )
    model_temperature: float | None = Field(
        default=None,
        ge=0,
        le=2,
        description="Sampling temperature sent with every model request; unset, the server's "
        "own default (a small local model calls its tools far more reliably at 0).",
    )
    done_rule: DoneRule = Field(
        default="in_prompt",
        description="When the model is asked to end a finished answer with its DONE line: "
        "in_prompt (the system prompt says so) or after_results (after the tool results: a "
        "small local model told up front writes the line at once instead of calling a tool).",
    )
    tool_schemas: ToolSchemas = Field(
        default="full",
        description="What the model is shown of the tools: full (every tool, as declared, in "
        "every call) or lean (in each turn the tools and arguments its request can need, in "
        "compact schemas: a small model's prompt is a third as long).",
    )
    model_streaming: bool = Field(
        default=True,
        description="Stream the model's answers as they are written; off, each comes whole "
        "(llama-cpp-python's function-calling format cannot stream an answer that may call a "
        "tool).",
    )
    plan_method: PlanMethod = Field(
        default="json_schema",
        description="How the model is asked for a mission's plan: json_schema, json_mode, "
        "function_calling, or off (the plan comes from the tools' phrasings).",
    )

    @property
    def token_model(self) -> str | None:
        """The model whose tokenizer counts the context budget; None: the estimate."""
        return self.openai_model if self.openai_api_key else None
