"""The tool_execution node: runs the assistant's tool calls, asking first before destructive ones.

A tool declared with a ``Confirm`` (delete and rename) needs a yes. Unless the user's message
already said so ("delete task 3, yes I'm sure"), the node puts the question (it joins ``messages``
and the node returns, the calls still waiting, so the graph checkpoints it), then runs again and
pauses on it with ``interrupt`` (``keel.nodes.support.confirming``). The next user message
answers it, whether it comes as ``Command(resume=...)`` or as a plain new input (``user_input``
adds it to ``messages`` and the graph comes back here). LangGraph re-runs a node from its start
when an interrupt is resumed, so every question is asked, and every answer read, before anything
is changed: no tool runs twice.
"""

from __future__ import annotations

from typing import Any

import structlog
from langchain_core.messages import AIMessage, ToolCall, ToolMessage
from langgraph.runtime import Runtime

from keel.nodes.events import tool_called
from keel.nodes.run_context import KeelContext, conversation_id
from keel.nodes.state.progress import close_steps
from keel.nodes.state.reducers import unstreamed
from keel.nodes.state.schema import ItemStatus, KeelState, NextStep, bump
from keel.nodes.support.confirming import carried_on, confirmed
from keel.nodes.support.previews import preview
from keel.nodes.support.waiting import call_key
from keel.tools.calls import payload, run_tool_call, tool_error, unanswered
from keel.tools.next_step import NEXT_STEP_TOOL, note_from_args
from keel.tools.spec import tool_sentence

log = structlog.get_logger(__name__)


def record_note(call: ToolCall) -> tuple[ToolMessage, NextStep | None]:
    """Run ``record_next_step``: the note goes into state, nothing is stored elsewhere."""
    note = note_from_args(call["args"])
    if note is None:
        return tool_error(call, "Error: the note names no step number."), None
    text = f"Noted: next step {note['step']}: {note['description']}"
    return ToolMessage(text, tool_call_id=call.get("id") or "", name=call["name"]), note


NOT_RUN = "Not run: the turn was stopped before this tool call."


def stopped(state: KeelState, last: AIMessage) -> dict[str, Any]:
    """The update of a turn its caller stopped before its tools: no pending call runs.

    Every call still without a result is answered "not run", a confirmation asked or answered is
    dropped with it, and the response node, seeing ``stop_requested``, ends the turn.
    """
    log.info("tools_not_run", calls=len(last.tool_calls))
    not_run = [tool_error(c, NOT_RUN) for c in unanswered(last.tool_calls, state["window"])]
    return {"window": unstreamed(not_run), "stop_requested": True}


async def tool_execution(state: KeelState, runtime: Runtime[KeelContext]) -> dict[str, Any]:
    """Run the pending tool calls of the last assistant message, asking first where needed.

    Calls that need a yes wait for it in ``interrupt`` (``keel.nodes.support.confirming``); the
    questions and answers given through ``Command(resume=...)`` join ``messages``. A new request
    given instead of an answer follows the cancelled calls in the window, so the assistant carries
    it out next. A turn its caller stopped (the API's cancel) runs none of the calls.
    """
    ctx = runtime.context
    last = next(m for m in reversed(state["window"]) if isinstance(m, AIMessage))
    if ctx.stop_event is not None and ctx.stop_event.is_set():
        return stopped(state, last)
    answered = await confirmed(last, state, runtime)
    update: dict[str, Any] = dict(answered.logged)
    if answered.shown:
        update["messages"] = unstreamed(answered.shown)
    if answered.waiting:  # a question put: checkpointed first, then waited on (no call runs)
        return update
    stand_ins = answered.stand_ins
    results: list[ToolMessage] = []
    todolist = state.get("todolist")
    for call in last.tool_calls:  # ... act after
        key = call_key(last, call.get("id"))
        if call["name"] == NEXT_STEP_TOOL:
            message, update["next_step"] = record_note(call)
            message.id = f"{key}:result"
            results.append(message)
            continue
        result = stand_ins[call.get("id")] or await run_tool_call(
            call,
            ctx.user_id,
            ctx.store.about(conversation_id(runtime)),  # a time set here is reminded here
            tools=ctx.resources.tools,
            pause_at=ctx.resources.pause_at,
            key=key,
            first_run=ctx.turn is not None and ctx.turn.first_run,
        )
        result.id = f"{key}:result"  # a re-run after a crash logs it once
        results.append(result)
        failed = result.status == "error" or bool(result.additional_kwargs.get("cancelled"))
        status: ItemStatus = "skipped" if failed else "done"
        if todolist is not None:
            note = str(result.content) if failed else None
            todolist = close_steps(todolist, call["name"], status, note, first_only=True)
        shown = payload(result, text=True)
        said = tool_sentence(ctx.resources.tools, call["name"], shown)
        runtime.stream_writer(tool_called(call["name"], call["args"], shown, said))
        log.info(
            "tool_executed",
            tool=call["name"],
            status=status,
            result_preview=preview(result.content),
        )
    stats = bump(state.get("stats"), "tool_calls", len(results))
    after: list[Any] = results
    if answered.new_request is not None:  # carried out next; the reply says what was cancelled
        after = [*results, carried_on(answered.new_request, last)]
        cancelled = [str(m.content) for m in results if m.additional_kwargs.get("cancelled")]
        update["turn_note"] = "\n".join(cancelled) or None
    return {**update, "window": unstreamed(after), "todolist": todolist, "stats": stats}
