"""The planner: the steps of a mission's todolist, from the model or from the tools' phrasings.

With a real model configured, the model plans (``model_steps``): it is asked for the steps as
structured output (``PlanSteps``: each step's description and the tool it intends, or none), and
the answer is validated: at least one and at most ``MAX_STEPS`` steps, known tools only, no empty
or overlong description. A plan the model cannot give, or gives unusable, falls back to the
phrasings (``phrase_steps``: one step per request the tools recognise, a single "answer" step
otherwise), which is also how the offline rule-based model plans. How the model is asked is a
setting (``PlanMethod``: a JSON schema, JSON mode, a function call, or not at all), since servers
differ in what they support; a refusal is logged with the provider's status and a preview of its
message, and reported as a ``model_fallback`` of the plan.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import structlog
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.tools import BaseTool
from langgraph.constants import TAG_NOSTREAM
from pydantic import BaseModel, Field

from keel.nodes.models.chat import ProviderFailed, classified
from keel.nodes.state.schema import TodoItem
from keel.nodes.support.previews import preview
from keel.tools.spec import spec_of
from keel.tools.understanding.reading import parse_intents

log = structlog.get_logger(__name__)

NL = "\n"
MAX_STEPS = 10
DESCRIPTION_MAX_CHARS = 200
PLAN_PROMPT = (
    "Break the user's request into the steps needed to carry it out, in order. Give each step a "
    "short description and the one tool it will use, or null for a step that is only an answer. "
    'Answer in JSON: {{"steps": [{{"description": "...", "tool": "..." or null}}]}}. '
    "Tools:\n{tools}"
)
PlanMethod = Literal["json_schema", "json_mode", "function_calling", "off"]
"""How the model is asked for a plan: structured output by JSON schema, JSON mode, a forced
function call, or not at all (the plan comes from the phrasings)."""


class PlanStep(BaseModel):
    """One step as the model plans it."""

    description: str = Field(description="What the step does, in a few words.")
    tool: str | None = Field(description="The tool the step uses, or null for a plain answer.")


class PlanSteps(BaseModel):
    """The model's plan for a request."""

    steps: list[PlanStep] = Field(description="The steps, in order.")


def phrase_steps(mission: str, tools: Sequence[BaseTool]) -> list[TodoItem]:
    """One step per request ``tools`` recognise in ``mission``, in the tool's words for a step
    ('Delete rice'); one "answer" step when none.
    """  # noqa: D205
    intents = parse_intents(mission, tools)
    if not intents:
        return [_item(1, f"Answer: {preview(mission, 80)}", None)]
    specs = {t.name: spec_of(t) for t in tools}
    return [
        _item(n, specs[i.tool].step_for(i.ref, i.args, i.text), i.tool)
        for n, i in enumerate(intents, start=1)
    ]


def _item(number: int, description: str, tool: str | None) -> TodoItem:
    return {"id": number, "description": description, "tool": tool, "status": "pending"}


def usable(plan: PlanSteps, tools: Sequence[BaseTool]) -> list[TodoItem] | None:
    """The model's plan as todolist items, or None when it is not one keel can follow."""
    names = {t.name for t in tools}
    steps = plan.steps
    if not 1 <= len(steps) <= MAX_STEPS:
        return None
    for step in steps:
        text = step.description.strip()
        if not text or len(text) > DESCRIPTION_MAX_CHARS or step.tool not in names | {None}:
            return None
    return [_item(n, s.description.strip(), s.tool) for n, s in enumerate(steps, start=1)]


def planning(model: BaseChatModel | None, method: PlanMethod) -> BaseChatModel | None:
    """The model that plans missions with ``method``; None when plans come from the phrasings."""
    return None if method == "off" else model


async def model_steps(
    mission: str,
    model: BaseChatModel,
    tools: Sequence[BaseTool],
    method: PlanMethod = "json_schema",
) -> tuple[list[TodoItem] | None, ProviderFailed | None]:
    """The model's plan for ``mission``, validated (None when it has no usable one), and the
    provider's failure when it refused to give one.
    """  # noqa: D205
    listed = "\n".join(f"- {t.name}: {(t.description or '').partition(NL)[0]}" for t in tools)
    messages = [SystemMessage(PLAN_PROMPT.format(tools=listed)), HumanMessage(mission[:4000])]
    try:
        planner = model.with_structured_output(PlanSteps, method=method)
        plan = await planner.ainvoke(messages, config={"tags": [TAG_NOSTREAM]})
    except Exception as exc:  # the model's plan is an improvement, never a reason to fail a turn
        failure = classified(exc)
        status, detail = getattr(failure, "status", None), getattr(failure, "detail", str(failure))
        log.warning(
            "plan_from_model_failed",
            error=type(exc).__name__,
            method=method,
            status=status,
            error_preview=preview(detail),
        )
        reason = "structured_output_refused" if status else getattr(failure, "reason", "error")
        return None, ProviderFailed(reason, status, preview(detail) or "")
    items = usable(plan, tools) if isinstance(plan, PlanSteps) else None
    if items is None:
        log.warning("plan_from_model_unusable", plan_preview=preview(str(plan)))
    return items, None
