"""Asking before a destructive tool call, and reading the answer: tool_execution's questions.

A tool declared with a ``Confirm`` (delete and rename) runs only after a yes. ``confirmed`` goes
through the assistant's calls before any runs: a call the user's message already confirmed, or
one answered (``decide``), gets its result or a stand-in (a "no" answers it as cancelled); a call
still unasked raises ``Ask`` with the question (``ConfirmationRequest``: the calls it decides,
each change named in full). ``call_key`` names a tool call for the ledger and the log, the same
in every re-run of the turn.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import cast

import structlog
from langchain_core.messages import AIMessage, HumanMessage, ToolCall, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from keel.nodes.run_context import KeelContext
from keel.nodes.state.confirmation import ConfirmationChange, ConfirmationRequest
from keel.nodes.state.schema import KeelState
from keel.nodes.support.message_log import log_exchange
from keel.tools.answers import answer_of, is_yes
from keel.tools.calls import run_tool_call
from keel.tools.spec import Confirm, confirmations, question
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


def confirm_of(call: ToolCall, runtime: Runtime[KeelContext]) -> Confirm | None:
    """The confirmation the call's tool needs (None: it runs without asking)."""
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


async def confirmed(
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
        decide(waiting, answer, needed, answers, runtime.context.resources.tools)
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


def decide(
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
