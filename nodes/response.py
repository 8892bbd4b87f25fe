"""The response node: decides whether the turn is really complete.

The turn ends only when the last assistant message has a DONE line, no tool call is waiting for
its result and the todolist has no open step. Otherwise it loops back to the assistant (with a
nudge when the assistant stopped short). Steps that the assistant still leaves open after a nudge
are closed as skipped, so the todolist tells the truth. A per-turn loop limit ends a turn that does
not converge, with ``complete`` false and a ``loop_limit`` event; so does the turn's time budget,
with a ``turn_timed_out`` event. A question the model asked with ``ask_user``
(``pending_question``) ends the turn waiting for the reply (the next message answers it, see the
reset node); a reply that merely ends in "?" asks nothing. A turn the caller stopped
(``stop_requested``) ends at once, with a ``turn_stopped`` event; so does a model that asked for a
step the turn already took (``repeated_step``). A turn the offline model finished after the
provider failed is complete only when no step of the plan is left open: the steps left are named
in the note, so a request half done is never reported done. When the turn ends, its messages
are written to the message log, with one assistant message: the reply the user sees.
"""

from __future__ import annotations

from typing import Any

import structlog
from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langgraph.runtime import Runtime

from keel.nodes.events import loop_limit, turn_stopped, turn_timed_out
from keel.nodes.models.chat import said_done
from keel.nodes.models.model_call import seconds_left
from keel.nodes.models.notes import (
    LOOP_LIMIT,
    MODEL_FAILED,
    NOT_DONE,
    OUT_OF_TIME,
    REPEATED,
    REPEATED_ANSWER,
    SAME_ANSWER,
    STOPPED,
)
from keel.nodes.run_context import KeelContext
from keel.nodes.state.progress import close_steps
from keel.nodes.state.reducers import unstreamed
from keel.nodes.state.schema import KeelState, Todolist, open_items
from keel.nodes.support.message_log import finished, flush
from keel.tools.calls import unanswered

log = structlog.get_logger(__name__)


def pending_tool_calls(window: list[AnyMessage]) -> list[str]:
    """Ids of tool calls of the last assistant message that have no result yet."""
    for i in range(len(window) - 1, -1, -1):
        message = window[i]
        if isinstance(message, AIMessage):
            return [c["id"] or "" for c in unanswered(message.tool_calls, window[i + 1 :])]
    return []


async def response(state: KeelState, runtime: Runtime[KeelContext]) -> dict[str, Any]:
    """Complete the turn (writing its messages to the log), or send it back to the assistant."""
    update = completion(state, runtime)
    if update.get("turn_over"):
        note = update.get("turn_note") or state.get("turn_note")  # tool_execution's, if any
        update.update(await flush(state, runtime, True, note))
        update["messages"] = unstreamed(finished(state.get("window", []), note))
        update["last_message_at"] = runtime.context.resources.clock().isoformat()
    return update


def unfinished(state: KeelState, runtime: Runtime[KeelContext]) -> dict[str, Any] | None:
    """The end of a turn that cannot go on: out of time, or no usable answer; else None."""
    ctx = runtime.context
    todolist = state.get("todolist")
    if state.get("out_of_time") or seconds_left(state, ctx) <= 0:
        still_open = [i["description"] for i in open_items(todolist)]
        runtime.stream_writer(turn_timed_out(ctx.turn_seconds, still_open))
        log.warning("turn_timed_out", seconds=ctx.turn_seconds, loops=state.get("loops", 0))
        note = OUT_OF_TIME.format(seconds=ctx.turn_seconds)
        return {"complete": False, "turn_over": True, "turn_note": note}
    if reason := state.get("model_failed"):
        note = MODEL_FAILED.format(reason=reason)
        return {"complete": False, "turn_over": True, "turn_note": note}
    if tools := state.get("repeated_step"):
        undone = [i for i in open_items(state.get("todolist")) if i["tool"]]
        said = REPEATED_ANSWER if undone else None  # a chat answer said again needs no note
        repeated = REPEATED.format(tools=tools) if tools != SAME_ANSWER else said
        return {"complete": False, "turn_over": True, "turn_note": repeated}
    return None


def not_done(todolist: Todolist) -> dict[str, Any]:
    """The end of a turn the offline model finished with steps of the plan still open: they are
    closed as skipped and named in the note, and the turn is not complete.
    """  # noqa: D205
    still = [i["description"] for i in open_items(todolist)]
    log.warning("turn_left_steps_open", steps=len(still))
    closed = close_steps(todolist, "*", "skipped", "not done: the model service failed")
    note = NOT_DONE.format(items="; ".join(still))
    return {"complete": False, "turn_over": True, "turn_note": note, "todolist": closed}


def completion(state: KeelState, runtime: Runtime[KeelContext]) -> dict[str, Any]:
    """The completion decision as a state update."""
    ctx = runtime.context
    window = state.get("window", [])
    last = window[-1] if window else None
    todolist = state.get("todolist")
    if state.get("stop_requested"):
        runtime.stream_writer(turn_stopped(state.get("loops", 0)))
        log.info("turn_stopped", loops=state.get("loops", 0))
        if todolist:
            todolist = close_steps(todolist, "*", "skipped", "the turn was stopped")
        return {
            "complete": False,
            "turn_over": True,
            "turn_note": STOPPED,
            "todolist": todolist,
            "stop_requested": False,
        }
    if state.get("pending_question"):  # the model asked (ask_user): the next message answers
        return {"complete": False, "turn_over": True}
    done = isinstance(last, AIMessage) and said_done(last, ctx.done_marker)
    if done and not pending_tool_calls(window):
        if todolist:
            todolist = close_steps(todolist, None, "done", "answered")
            if open_items(todolist) and state.get("fell_back"):  # the offline model did its part
                return not_done(todolist)
            if open_items(todolist) and state.get("nudges"):
                todolist = close_steps(todolist, "*", "skipped", "left open by the assistant")
        if not open_items(todolist):
            log.info("turn_complete", loops=state.get("loops", 0))
            return {"complete": True, "turn_over": True, "todolist": todolist}
    if (ended := unfinished(state, runtime)) is not None:
        return {**ended, "todolist": todolist}
    loops = state.get("loops", 0)
    exhausted = bool(state.get("context_exhausted"))
    if loops >= ctx.loop_limit:
        still_open = [i["description"] for i in open_items(todolist)]
        runtime.stream_writer(loop_limit(loops, ctx.loop_limit, still_open))
        log.warning("loop_limit_reached", loops=loops, limit=ctx.loop_limit)
        note = LOOP_LIMIT.format(loops=loops)
        return {"complete": False, "turn_over": True, "turn_note": note, "todolist": todolist}
    stopped_short = not exhausted and not isinstance(last, ToolMessage)
    nudges = state.get("nudges", 0) + (1 if stopped_short else 0)
    return {"loops": loops + 1, "nudges": nudges, "todolist": todolist}
