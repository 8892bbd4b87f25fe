"""The resume node: a fresh context window when the old one is exhausted.

Entered before the assistant when the model input passes the token budget, or after the provider
refused it as too long. Per the resume strategy: back the conversation up (a failed backup warns
and goes on); take the step to continue from (the next-step note, else max(steps_completed) + 1,
else step 1); build the continuation prompt from the template plus a short summary of the old
window; open a fresh window; count the resume, audit it, log "Starting new session from step N"
and emit a ``resumed`` event. The message log is untouched.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import structlog
from langchain_core.messages import AnyMessage, HumanMessage, RemoveMessage, ToolMessage
from langgraph.config import get_config
from langgraph.constants import CONFIG_KEY_CHECKPOINTER
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.runtime import Runtime

from keel.nodes.assistant import model_input
from keel.nodes.events import audit_entry, resumed
from keel.nodes.models.markers import RESUME_KWARG, SYNTHETIC
from keel.nodes.models.tokens import count_tokens, fits
from keel.nodes.run_context import KeelContext, conversation_id
from keel.nodes.state.reducers import unstreamed
from keel.nodes.state.schema import KeelState, bump, open_items
from keel.nodes.support.message_log import flush
from keel.nodes.support.previews import preview

log = structlog.get_logger(__name__)

SUMMARY_MESSAGES = 6
CARRIED = "keel_carried"
"""additional_kwargs flag of the current turn's messages carried into a resume's fresh window."""
TOOL_OUTPUT_FLOOR = 4000
"""Carried tool results are cut to fit the budget, but never below this many characters."""


def context_exhausted(state: KeelState, ctx: KeelContext) -> bool:
    """The provider said so, or the next model input would pass the token budget.

    A window that holds nothing but a resume's continuation counts as fresh, whatever its size.
    """
    if state.get("context_exhausted"):
        return True
    window = state.get("window", [])
    if window and {RESUME_KWARG, CARRIED} & window[-1].additional_kwargs.keys():
        return False  # a window this fresh cannot be made smaller; let the model try
    messages = model_input(state, ctx.resources.prompt)
    return not fits(messages, ctx.context_token_budget, ctx.resources.token_model)


def continuation_step(state: KeelState) -> tuple[int, str]:
    """The step to continue from: the note, else max(steps_completed) + 1, else step 1."""
    if note := state.get("next_step"):
        return note["step"], note["description"]
    todolist = state.get("todolist")
    done = todolist["steps_completed"] if todolist else []
    step = max(done) + 1 if done else 1
    described = {i["id"]: i["description"] for i in todolist["items"]} if todolist else {}
    if step in described:
        return step, described[step]
    remaining = open_items(todolist)
    return step, remaining[0]["description"] if remaining else "Continue workflow"


def summarize_window(window: Sequence[AnyMessage]) -> str:
    """A few lines on what the old window held."""
    lines = []
    for message in window[-SUMMARY_MESSAGES:]:
        text = preview(message.text, 100) or ""
        if message.type == "ai" and getattr(message, "tool_calls", None):
            text = "called " + ", ".join(c["name"] for c in message.tool_calls)
        if text:
            lines.append(f"- {message.type}: {text}")
    return "\n".join(lines) or "- (nothing yet)"


def current_turn(window: Sequence[AnyMessage]) -> list[AnyMessage]:
    """The messages of the turn under way: from its user message (the last real one) on."""
    for i in range(len(window) - 1, -1, -1):
        message = window[i]
        if message.type == "human" and not message.additional_kwargs.get(SYNTHETIC):
            return list(window[i:])
    return []


def carry(messages: Sequence[AnyMessage], budget: int, token_model: str | None) -> list[Any]:
    """Copies of the current turn's messages for the fresh window, tool output cut to fit.

    They keep their ids (the message log already has them), and are marked so that the window
    they open counts as fresh.
    """
    carried = [
        m.model_copy(update={"additional_kwargs": {**m.additional_kwargs, CARRIED: True}})
        for m in messages
    ]
    tools = [m for m in carried if isinstance(m, ToolMessage)]
    if tools and count_tokens(carried, token_model) > budget:
        limit = max(TOOL_OUTPUT_FLOOR, budget * 4 // len(tools))
        for m in tools:
            if len(text := str(m.content)) > limit:
                m.content = text[:limit] + " …(cut to fit the context window)"
    return carried


async def _backup(runtime: Runtime[KeelContext], reason: str) -> str | None:
    ctx = runtime.context
    if ctx.resources.backups is None:
        log.warning("backup_skipped", reason="no backup store configured")
        return None
    try:
        running = get_config()["configurable"].get(CONFIG_KEY_CHECKPOINTER)
        return await ctx.resources.backups.backup(conversation_id(runtime), reason, running)
    except Exception as exc:  # a failed backup never stops the resume
        log.warning("backup_failed", error=type(exc).__name__, detail=preview(exc))
        return None


async def resume(state: KeelState, runtime: Runtime[KeelContext]) -> dict[str, Any]:
    """Open a fresh window that picks up where the plan stands."""
    ctx = runtime.context
    reason = "context_length_error" if state.get("context_exhausted") else "token_budget"
    logged = await flush(state, runtime)  # the old window's messages reach the log before it goes
    backup_id = await _backup(runtime, reason)
    todolist = state.get("todolist")
    from_step = max(todolist["steps_completed"], default=0) if todolist else 0
    step, description = continuation_step(state)
    prompt = ctx.resume_template.format(step=step, description=description)
    remaining = [i["description"] for i in open_items(todolist)]
    text = f"{prompt}\n\nSummary of the previous context:\n{summarize_window(state['window'])}"
    if remaining:
        text += "\n\nSteps still open:\n" + "\n".join(f"- {r}" for r in remaining)
    message = HumanMessage(text, additional_kwargs={SYNTHETIC: True, RESUME_KWARG: remaining})
    detail = {"from_step": from_step, "to_step": step, "backup_id": backup_id}
    entry = audit_entry("resume", reason, detail, ctx.resources.clock())
    log.info(
        f"Starting new session from step {step}", step=step, reason=reason, backup_id=backup_id
    )
    runtime.stream_writer(resumed(step, description, reason, backup_id))
    carried = carry(
        current_turn(state["window"]), ctx.context_token_budget, ctx.resources.token_model
    )
    return {
        "window": unstreamed([RemoveMessage(id=REMOVE_ALL_MESSAGES), message, *carried]),
        "history": [],
        "topic_changed": False,
        "context_exhausted": False,
        "next_step": None,
        "stats": bump(state.get("stats"), "total_resumes"),
        "audit": [entry],
        **logged,
    }
