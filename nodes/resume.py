"""The resume node: a fresh context window when the old one is exhausted.

Entered before the assistant when the window's estimated size passes the token budget. It picks
the step to continue from (the next-step note, else the step after the last completed one, else
step 1), opens a fresh window holding the continuation prompt and the current request, counts the
resume and records it in the audit.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import structlog
from langchain_core.messages import AnyMessage, HumanMessage, RemoveMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.runtime import Runtime

from graphs.state import KeelState, bump, open_items
from nodes.events import emit
from nodes.log_writer import SYNTHETIC
from nodes.runtime import KeelContext

log = structlog.get_logger(__name__)

CONTINUATION_TEMPLATE = "Continue from step {step}: {description}"
CHARS_PER_TOKEN = 4
"""The rule-based model's token estimate: about four characters of text per token."""


def estimate_tokens(messages: list[AnyMessage]) -> int:
    """A cheap estimate of the tokens ``messages`` take in a model call."""
    return sum(len(str(m.content)) + 16 for m in messages) // CHARS_PER_TOKEN


def context_exhausted(state: KeelState, budget: int) -> bool:
    """The window no longer fits the token budget."""
    return estimate_tokens(state.get("window", [])) > budget


def next_step(state: KeelState) -> tuple[int, str]:
    """The step to continue from: the note, else max(steps_completed) + 1, else step 1."""
    todolist = state.get("todolist")
    if note := state.get("next_step"):
        return note["step"], note["description"]
    if todolist and todolist["steps_completed"]:
        step = max(todolist["steps_completed"]) + 1
    else:
        step = 1
    described = {i["id"]: i["description"] for i in (todolist or {"items": []})["items"]}
    if step not in described:
        remaining = open_items(todolist)
        return step, remaining[0]["description"] if remaining else (state.get("mission") or "")
    return step, described[step]


def resume(state: KeelState, runtime: Runtime[KeelContext]) -> dict[str, Any]:
    """Open a fresh window that picks up where the plan stands."""
    step, description = next_step(state)
    prompt = CONTINUATION_TEMPLATE.format(step=step, description=description)
    stats = bump(state.get("stats"), "total_resumes")
    at = datetime.now(UTC).isoformat()
    entry = {"at": at, "kind": "resume", "reason": "context_budget", "detail": {"to_step": step}}
    log.info(f"Starting new session from step {step}", step=step)
    emit("resumed", {"step": step, "description": description, "reason": "context_budget"})
    request = next((m for m in state.get("window", []) if m.type == "human"), None)
    fresh: list[AnyMessage | RemoveMessage] = [
        RemoveMessage(id=REMOVE_ALL_MESSAGES),
        HumanMessage(prompt, additional_kwargs={SYNTHETIC: True}),
    ]
    if request is not None:
        fresh.append(request)
    return {"window": fresh, "stats": stats, "audit": [entry]}
