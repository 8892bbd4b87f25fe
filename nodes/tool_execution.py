"""The tool_execution node: runs the assistant's tool calls, asking first before destructive ones.

A tool declared with a ``Confirm`` (delete and rename) needs a yes. Unless the user's message
already said so ("delete task 3, yes I'm sure"), the node records the question in ``awaiting`` and
comes back to itself, where it pauses with ``interrupt`` carrying the question. The next user
message answers it, whether it comes as ``Command(resume=...)`` or as a plain new input
(``user_input`` hands it over as ``answer``). LangGraph re-runs a node from its start when an
interrupt is resumed, so every question is asked before anything is changed: no tool runs twice.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any, cast

import structlog
from langchain_core.messages import AIMessage, HumanMessage, ToolCall, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from keel.nodes.events import tool_called
from keel.nodes.run_context import KeelContext
from keel.nodes.state.progress import close_step
from keel.nodes.state.schema import (
    ConfirmationChange,
    ConfirmationRequest,
    ItemStatus,
    KeelState,
    NextStep,
    bump,
    unstreamed,
)
from keel.nodes.support.message_log import flush, log_exchange
from keel.nodes.support.previews import preview
from keel.tools.answers import answer_of, is_yes
from keel.tools.calls import run_tool_call
from keel.tools.next_step import NEXT_STEP_TOOL, note_from_args
from keel.tools.spec import Confirm, confirmations, question, tool_sentence
from keel.tools.todo import GET
from keel.tools.understanding import confirms, parse_intents

log = structlog.get_logger(__name__)


def confirmation_request(
    asks: list[tuple[ToolCall, Confirm]],
    asked: int = 1,
    missing: dict[str, str] | None = None,
    titles: dict[str, str] | None = None,
) -> ConfirmationRequest:
    """One question for the calls that need a yes: what, on which tasks, the prompt, the calls.

    ``missing``: the calls left out of the question because their task is not there, with the
    error each one answers (kept, so that no later answer runs them). ``titles``: each call's
    task title when it was asked (by call id), so the question names what will change.
    """
    first, confirm = asks[0]
    prompt = question([(c, call["args"]) for call, c in asks])
    titles = titles or {}
    return {
        "action": confirm.verb,
        "task_id": first["args"].get(confirm.target),
        "task_ids": [call["args"].get(c.target) for call, c in asks],
        "prompt": prompt if asked == 1 else f"Please answer yes or no. {prompt}",
        "changes": [
            cast(ConfirmationChange, c.change(call["args"], titles.get(call.get("id") or "")))
            for call, c in asks
        ],
        "tool_call_id": first.get("id"),
        "tool_call_ids": [call.get("id") or "" for call, _ in asks],
        "asked": asked,
        "missing": missing or {},
        "titles": titles,
    }


def _request(state: KeelState) -> str:
    """The turn's own request (``content`` holds the answer once one came as a new message)."""
    for message in state.get("window", []):
        if isinstance(message, HumanMessage) and (message.id or "").endswith(":user"):
            return message.text
    return state.get("content", "")


def _confirm(call: ToolCall, runtime: Runtime[KeelContext]) -> Confirm | None:
    return confirmations(runtime.context.resources.tools).get(call["name"])


def _cancelled(call: ToolCall, confirm: Confirm) -> ToolMessage:
    return ToolMessage(
        confirm.cancelled(call["args"]),
        tool_call_id=call.get("id") or "",
        name=call["name"],
        additional_kwargs={"cancelled": True},
    )


class Ask(Exception):
    """A call needs a yes that was not asked for yet: the node asks, then waits (next entry)."""

    def __init__(self, request: ConfirmationRequest) -> None:
        """Carry the question."""
        self.request = request


def call_key(message: AIMessage, call_id: str | None) -> str:
    """A tool call's key in the ledger and the log: its id within the assistant message.

    The message's id names the conversation, the turn and the round, so only a replay of the very
    same call matches; a provider's ids alone (``functions.create_todo_task:0``) repeat.
    """
    key = f"{message.id}:{call_id}" if message.id else call_id or ""
    if len(key) > KEY_MAX_CHARS:  # the ledger's and the log's key columns hold 200
        key = "sha256:" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()
    return key


KEY_MAX_CHARS = 180


async def _probe(
    call: ToolCall, confirm: Confirm, runtime: Runtime[KeelContext]
) -> ToolMessage | str | None:
    """The task a call that needs a yes acts on: its title, or the error that stands in for the
    call when the task is not there (nothing to ask about); None when it acts on no task.
    """  # noqa: D205
    if confirm.target != "task_id":
        return None
    ctx, call_id = runtime.context, call.get("id") or ""
    probe = ToolCall(
        name=GET, args={"task_id": call["args"].get("task_id")}, id=call_id, type="tool_call"
    )
    checked = await run_tool_call(
        probe, ctx.user_id, ctx.resources.store, tools=ctx.resources.tools
    )
    if checked.status == "error":
        return ToolMessage(checked.content, tool_call_id=call_id, name=call["name"], status="error")
    try:
        title = json.loads(str(checked.content)).get("title")
    except (ValueError, AttributeError):
        return None
    return title if isinstance(title, str) else None


async def _confirmed(
    last: AIMessage,
    state: KeelState,
    runtime: Runtime[KeelContext],
    answers: dict[str, str],
) -> dict[str | None, ToolMessage | None]:
    """For each call of ``last``: None when it may run, else the ToolMessage standing in for it.

    The calls that need a yes are asked about in one question, once; a call runs only if the
    question named it and the answer was yes. A call whose task is not there is left out of the
    question and answers its error.

    Raises:
        Ask: the question has not been put yet, or the answer was unclear.
    """
    confirm_of = confirmations(runtime.context.resources.tools)
    stand_ins: dict[str | None, ToolMessage | None] = {c.get("id"): None for c in last.tool_calls}
    if confirms(_request(state)):
        return stand_ins
    needed = [(call, c) for call in last.tool_calls if (c := confirm_of.get(call["name"]))]
    if not needed:
        return stand_ins
    waiting = state.get("awaiting")
    ids = {call.get("id") or "" for call in last.tool_calls}
    if not waiting or not set(waiting.get("tool_call_ids") or ["?"]) <= ids:  # not asked yet
        missing, titles = {}, {}
        for call, confirm in needed:
            found = await _probe(call, confirm, runtime)
            if isinstance(found, ToolMessage):
                missing[call.get("id") or ""] = str(found.content)
            elif found is not None:
                titles[call.get("id") or ""] = found
        asks = [(call, c) for call, c in needed if (call.get("id") or "") not in missing]
        if asks:
            raise Ask(confirmation_request(asks, missing=missing, titles=titles))
        waiting = _nothing_asked(missing)
    elif any(call_id not in answers for call_id in waiting["tool_call_ids"]):
        answer = str(interrupt(waiting))
        key = f"answer:{call_key(last, waiting.get('tool_call_id'))}:{waiting.get('asked', 1)}"
        await log_exchange(runtime, state, key, "user", answer)
        _decide(waiting, answer, needed, answers, runtime.context.resources.tools)
    for call, confirm in needed:
        stand_ins[call.get("id")] = _stand_in(call, confirm, waiting, answers)
    return stand_ins


def _nothing_asked(missing: dict[str, str]) -> ConfirmationRequest:
    """No question: every call that needed one has no task to act on."""
    return {
        "action": "",
        "task_id": None,
        "task_ids": [],
        "prompt": "",
        "changes": [],
        "tool_call_id": None,
        "tool_call_ids": [],
        "asked": 0,
        "missing": missing,
    }


def _stand_in(
    call: ToolCall, confirm: Confirm, waiting: ConfirmationRequest, answers: dict[str, str]
) -> ToolMessage | None:
    """None when ``call`` may run: the question named it and the answer was yes."""
    call_id = call.get("id") or ""
    missing = (waiting.get("missing") or {}).get(call_id)
    if missing is not None:
        return ToolMessage(missing, tool_call_id=call_id, name=call["name"], status="error")
    if call_id in waiting["tool_call_ids"] and is_yes(answers.get(call_id)):
        return None
    return _cancelled(call, confirm)


def _decide(
    waiting: ConfirmationRequest,
    answer: str,
    needed: list[tuple[ToolCall, Confirm]],
    answers: dict[str, str],
    tools: Sequence[BaseTool],
) -> None:
    """Record ``answer`` for every call the question covers; an unclear one asks again.

    A new request instead of an answer ("add eggs", "delete task 3 instead") counts as a no,
    whatever yes words it holds; one about the question's own tasks ("yes, delete it") does not.
    """
    if _new_request(answer, waiting, needed, tools):
        answer = "no"
    elif answer_of(answer) is None:
        asked = [(call, c) for call, c in needed if call.get("id") in waiting["tool_call_ids"]]
        again = waiting.get("asked", 1) + 1
        raise Ask(confirmation_request(asked, again, waiting.get("missing"), waiting.get("titles")))
    for call_id in waiting.get("tool_call_ids") or [waiting.get("tool_call_id") or ""]:
        answers[call_id] = answer


def _new_request(
    answer: str,
    waiting: ConfirmationRequest,
    needed: list[tuple[ToolCall, Confirm]],
    tools: Sequence[BaseTool],
) -> bool:
    """``answer`` asks for something the question was not about."""
    asked_tools = {call["name"] for call, _ in needed}
    for intent in parse_intents(answer, tools):
        if intent.tool not in asked_tools:
            return True
        if intent.task_id is not None and intent.task_id not in waiting["task_ids"]:
            return True
        if intent.needs_lookup and not intent.refers_back and intent.select is None:
            return True
    return False


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


NOT_RUN = "Not run: the turn was stopped before this tool call."


def stopped(state: KeelState, last: AIMessage) -> dict[str, Any]:
    """The update of a turn its caller stopped before its tools: no pending call runs.

    Every call still without a result is answered "not run", a confirmation asked or answered is
    dropped with it, and the response node, seeing ``stop_requested``, ends the turn.
    """
    answered = {m.tool_call_id for m in state["window"] if isinstance(m, ToolMessage)}
    log.info("tools_not_run", calls=len(last.tool_calls))
    not_run = [
        ToolMessage(NOT_RUN, tool_call_id=c.get("id") or "", name=c["name"], status="error")
        for c in last.tool_calls
        if c.get("id") not in answered
    ]
    return {
        "window": unstreamed(not_run),
        "stop_requested": True,
        "awaiting": None,
        "answer": None,
        "confirmations": {},
    }


async def tool_execution(state: KeelState, runtime: Runtime[KeelContext]) -> dict[str, Any]:
    """Run the pending tool calls of the last assistant message, asking first where needed.

    A call that needs a yes is asked for in one step (the question goes into ``awaiting``, so the
    state says TOOL_EXECUTION while it waits) and waited for in the next, with ``interrupt``. A
    turn its caller stopped (the API's cancel) runs none of them.
    """
    ctx = runtime.context
    last = next(m for m in reversed(state["window"]) if isinstance(m, AIMessage))
    if ctx.stop_event is not None and ctx.stop_event.is_set():
        return stopped(state, last)
    answers = dict(state.get("confirmations") or {})
    waiting = state.get("awaiting")
    try:
        if waiting and state.get("answer") is not None:  # answered by a new message
            key = f"answer:{call_key(last, waiting.get('tool_call_id'))}:{waiting.get('asked', 1)}"
            await log_exchange(runtime, state, key, "user", str(state["answer"]))
            needed = [(c, f) for c in last.tool_calls if (f := _confirm(c, runtime)) is not None]
            tools = ctx.resources.tools
            _decide(waiting, str(state["answer"]), needed, answers, tools)
        stand_ins = await _confirmed(last, state, runtime, answers)  # ask first ...
    except Ask as ask:
        logged = await flush(state, runtime)
        key = call_key(last, ask.request["tool_call_id"])
        asked = ask.request["asked"]
        await log_exchange(
            runtime,
            {**state, **logged},  # type: ignore[typeddict-item]
            f"ask:{key}" + (f":{asked}" if asked > 1 else ""),
            "assistant",
            ask.request["prompt"],
        )
        log.info(
            "confirmation_asked", tool=ask.request["action"], tasks=len(ask.request["task_ids"])
        )
        return {"awaiting": ask.request, "answer": None, "confirmations": answers, **logged}
    results: list[ToolMessage] = []
    todolist = state.get("todolist")
    update: dict[str, Any] = {"awaiting": None, "answer": None, "confirmations": {}}
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
            ctx.resources.store,
            tools=ctx.resources.tools,
            pause_at=ctx.resources.pause_at,
            key=key,
            first_run=ctx.note is not None and ctx.note.first_run,
        )
        result.id = f"{key}:result"  # a re-run after a crash logs it once
        results.append(result)
        failed = result.status == "error" or bool(result.additional_kwargs.get("cancelled"))
        status: ItemStatus = "skipped" if failed else "done"
        todolist = close_step(
            todolist, call["name"], status, str(result.content) if failed else None
        )
        shown = _result_for_event(result)
        said = tool_sentence(ctx.resources.tools, call["name"], shown)
        runtime.stream_writer(tool_called(call["name"], call["args"], shown, said))
        log.info(
            "tool_executed",
            tool=call["name"],
            status=status,
            result_preview=preview(result.content),
        )
    stats = bump(state.get("stats"), "tool_calls", len(results))
    return {**update, "window": unstreamed(results), "todolist": todolist, "stats": stats}


def waits_for_answer(state: KeelState) -> bool:
    """tool_execution asked a question: it goes back to itself to wait for the answer."""
    return bool(state.get("awaiting")) and state.get("answer") is None
