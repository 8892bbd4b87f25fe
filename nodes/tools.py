"""The tool_execution node: runs the assistant's tool calls, asking first before destructive ones.

Delete and rename need a yes. Unless the user's message already said so ("delete task 3, yes I'm
sure"), the node pauses with ``interrupt`` carrying the question; the next user message resumes it.
LangGraph re-runs a node from its start when an interrupt is resumed, so every question is asked
before anything is changed: no tool runs twice.
"""

from __future__ import annotations

import json
from typing import Any

import structlog
from langchain_core.messages import AIMessage, ToolCall, ToolMessage
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from graphs.state import ItemStatus, KeelState, NextStep, bump
from nodes.events import emit
from nodes.intents import confirms, is_yes
from nodes.log_writer import flush, log_exchange
from nodes.logs import preview
from nodes.next_step import NEXT_STEP_TOOL, note_from_args
from nodes.progress import close_step
from nodes.runtime import KeelContext
from tools.todo import DESTRUCTIVE, run_tool_call

log = structlog.get_logger(__name__)


def confirmation_request(call: ToolCall) -> dict[str, Any]:
    """The interrupt payload for a destructive call: action, task_id and the question."""
    action = DESTRUCTIVE[call["name"]]
    task_id = call["args"].get("task_id")
    return {
        "action": action,
        "task_id": task_id,
        "prompt": f"Are you sure you want to {action} task {task_id}? (yes/no)",
        "tool_call_id": call.get("id"),
    }


async def _confirmed(call: ToolCall, state: KeelState, ctx: KeelContext) -> ToolMessage | None:
    """None when the call may run; otherwise the ToolMessage that stands in for it."""
    if call["name"] not in DESTRUCTIVE or confirms(state.get("content", "")):
        return None
    user_id, store = ctx.user_id, ctx.task_store()
    probe = ToolCall(
        name="get_todo_task",
        args={"task_id": call["args"].get("task_id")},
        id=call.get("id"),
        type="tool_call",
    )
    checked = await run_tool_call(probe, user_id, store)
    if checked.status == "error":
        return ToolMessage(
            checked.content, tool_call_id=call.get("id") or "", name=call["name"], status="error"
        )
    request = confirmation_request(call)
    await flush(state, ctx)
    await log_exchange(ctx, state, f"ask:{call.get('id')}", "assistant", request["prompt"])
    answer = interrupt(request)
    await log_exchange(ctx, state, f"answer:{call.get('id')}", "user", str(answer))
    if is_yes(answer):
        return None
    verb = "deleted" if request["action"] == "delete" else "renamed"
    text = f"Cancelled: task {request['task_id']} was not {verb}."
    return ToolMessage(
        text,
        tool_call_id=call.get("id") or "",
        name=call["name"],
        additional_kwargs={"cancelled": True},
    )


def record_note(call: ToolCall) -> tuple[ToolMessage, NextStep | None]:
    """Run ``record_next_step``: the note goes into state, nothing is stored elsewhere."""
    note = note_from_args(call["args"])
    call_id, name = call.get("id") or "", call["name"]
    if note is None:
        text = "Error: the note names no step number."
        return ToolMessage(text, tool_call_id=call_id, name=name, status="error"), None
    text = f"Noted: next step {note['step']}: {note['description']}"
    return ToolMessage(text, tool_call_id=call_id, name=name), note


def _result_for_event(message: ToolMessage) -> Any:
    try:
        return json.loads(str(message.content))
    except ValueError:
        return str(message.content)


async def tool_execution(state: KeelState, runtime: Runtime[KeelContext]) -> dict[str, Any]:
    """Run the pending tool calls of the last assistant message."""
    ctx = runtime.context
    store = ctx.task_store()
    last = next(m for m in reversed(state["window"]) if isinstance(m, AIMessage))
    stand_ins = {}
    for call in last.tool_calls:  # ask first ...
        stand_ins[call.get("id")] = await _confirmed(call, state, ctx)
    results: list[ToolMessage] = []
    todolist = state.get("todolist")
    update: dict[str, Any] = {}
    for call in last.tool_calls:  # ... act after
        if call["name"] == NEXT_STEP_TOOL:
            message, update["next_step"] = record_note(call)
            message.id = f"{call.get('id')}:result"
            results.append(message)
            continue
        result = stand_ins[call.get("id")] or await run_tool_call(call, ctx.user_id, store)
        result.id = f"{call.get('id')}:result"  # a re-run after a crash logs it once
        results.append(result)
        failed = result.status == "error" or bool(result.additional_kwargs.get("cancelled"))
        status: ItemStatus = "skipped" if failed else "done"
        todolist = close_step(
            todolist, call["name"], status, str(result.content) if failed else None
        )
        payload = {"name": call["name"], "args": call["args"], "result": _result_for_event(result)}
        emit("tool_call", payload)
        log.info(
            "tool_executed",
            tool=call["name"],
            status=status,
            result_preview=preview(result.content),
        )
    stats = bump(state.get("stats"), "tool_calls", len(results))
    return {**update, "window": results, "todolist": todolist, "stats": stats}
