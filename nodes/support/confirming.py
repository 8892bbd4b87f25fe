"""Asking before a destructive tool call, and reading the answer: tool_execution's questions.

A tool declared with a ``Confirm`` (delete and rename) runs only after a yes. ``confirmed`` goes
through the assistant's calls before any runs. Unless the turn's own message said yes ("delete task
3, yes I'm sure"), the calls that need one are asked about in one question: LangGraph's
``interrupt`` with an ``ApprovalRequest`` (LangChain's human-in-the-loop request, the question in
words beside it: the question, then each change on a line of its own, "Delete task 3 - book
dentist", so every client shows what will change, in the conversation as after a reload). It is
answered by ``Command(resume=...)``, with decisions (Agent Chat UI's Approve and Reject) or with the
answer's text, or by the next message typed as a plain input (``user_input`` adds it to ``messages``
after the question, and the graph comes back here). A yes runs the calls, a no cancels them, an
unclear answer asks again ("Please answer yes or no."), and a new request instead of an answer ("add
eggs") cancels them and is then carried out. A call whose task is not there is left out of the
question and answers its error. LangGraph runs the node again from its start when it is resumed: the
question is asked, and every answer read, before anything is changed. Where the turn stands (the
calls that wait, the answers typed) is read by ``keel.nodes.support.waiting``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

import structlog
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    HumanMessage,
    ToolCall,
    ToolMessage,
)
from langchain_core.tools import BaseTool
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from keel.nodes.models.markers import SYNTHETIC
from keel.nodes.run_context import KeelContext, conversation_id
from keel.nodes.state.confirmation import ApprovalRequest, ConfirmationChange, approval_request
from keel.nodes.state.schema import KeelState
from keel.nodes.support.message_log import flush, log_exchange
from keel.nodes.support.waiting import call_key, question_id, typed_answers
from keel.tools.calls import payload, run_tool_call, tool_error
from keel.tools.ledger import recall
from keel.tools.spec import NAMED_MAX, Confirm, confirmations, question
from keel.tools.tasks.reads import get_todo_task
from keel.tools.tasks.todo import GET
from keel.tools.understanding.reading import confirms, parse_intents
from keel.tools.yes_no import answer_of

log = structlog.get_logger(__name__)

Verdict = Literal["yes", "no", "new"]
"""What an answer says: yes, no, or a new request instead (a no, and then it is carried out)."""
AGAIN = "Please answer yes or no."


def confirm_of(call: ToolCall, runtime: Runtime[KeelContext]) -> Confirm | None:
    """The confirmation the call's tool needs (None: it runs without asking)."""
    return confirmations(runtime.context.resources.tools).get(call["name"])


@dataclass
class Asked:
    """The question about a message's calls, and what is known before it is answered."""

    request: ApprovalRequest | None
    """The question (None: no call needs one, or none has its task)."""
    call_ids: list[str]
    """The calls it asks about, in order."""
    missing: dict[str, str] = field(default_factory=dict)
    """Calls left out of it, their task not there: the error each one answers."""

    def put(self, asked: int) -> ApprovalRequest:
        """The request as put the ``asked``-th time (after an unclear answer, "Please answer")."""
        assert self.request is not None
        if asked == 1:
            return self.request
        return {**self.request, "question": f"{AGAIN} {self.request['question']}"}


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
    checked = await run_tool_call(probe, ctx.user_id, ctx.resources.store, tools=[get_todo_task])
    if checked.status == "error":
        return tool_error(call, str(checked.content))
    data = payload(checked)
    title = data.get("title") if isinstance(data, dict) else None
    return title if isinstance(title, str) else None


async def ask(last: AIMessage, runtime: Runtime[KeelContext]) -> Asked:
    """The one question about ``last``'s calls that need a yes, each change named in full."""
    needed = [(call, c) for call in last.tool_calls if (c := confirm_of(call, runtime)) is not None]
    missing: dict[str, str] = {}
    titles: dict[str, str] = {}
    for call, confirm in needed:
        found = await _probe(call, confirm, runtime)
        if isinstance(found, ToolMessage):
            missing[call.get("id") or ""] = str(found.content)
        elif found is not None:
            titles[call.get("id") or ""] = found
    asks = [(call, c) for call, c in needed if (call.get("id") or "") not in missing]
    if not asks:
        return Asked(None, [], missing)
    changes = [
        (
            call["name"],
            dict(call["args"]),
            cast(ConfirmationChange, c.change(call["args"], titles.get(call.get("id") or ""))),
        )
        for call, c in asks
    ]
    named = [change["text"] for _, _, change in changes] if len(changes) <= NAMED_MAX else []
    words = "\n".join([question([(c, call["args"]) for call, c in asks]), *named])
    ids = [call.get("id") or "" for call, _ in asks]
    return Asked(approval_request(changes, words), ids, missing)


def _request(state: KeelState) -> str:
    """The turn's own request, as its window opens."""
    for message in state.get("window", []):
        if isinstance(message, HumanMessage) and (message.id or "").endswith(":user"):
            return message.text
    return state.get("request", "")


def _cancelled(call: ToolCall, confirm: Confirm) -> ToolMessage:
    return ToolMessage(
        confirm.cancelled(call["args"]),
        tool_call_id=call.get("id") or "",
        name=call["name"],
        additional_kwargs={"cancelled": True},
    )


@dataclass
class Answered:
    """The calls decided: a stand-in for each call that may not run, and what the answers add."""

    stand_ins: dict[str | None, ToolMessage | None]
    """For each call: None when it may run, else the ToolMessage standing in for it."""
    shown: list[AnyMessage] = field(default_factory=list)
    """Questions and answers given through ``Command(resume=...)``, for ``messages``."""
    new_request: str | None = None
    """A new request given instead of an answer: carried out once the calls are cancelled."""
    logged: dict[str, Any] = field(default_factory=dict)
    """Where the turn's messages went in the log (``branch``), when a question was asked."""


async def confirmed(last: AIMessage, state: KeelState, runtime: Runtime[KeelContext]) -> Answered:
    """Decide every call of ``last``: asked about once (``interrupt``), run only on a yes.

    Answers typed as messages are read first; the graph pauses for one when none decides. Each
    question is logged before it is put, and an answer counts only for the question as it was put:
    when the tasks changed in between (the question would now name others), it is put again.
    """
    stand_ins: dict[str | None, ToolMessage | None] = {c.get("id"): None for c in last.tool_calls}
    if confirms(_request(state)) or await _said_yes(last, runtime):
        return Answered(stand_ins)
    asked = await ask(last, runtime)
    verdicts: dict[str, Verdict] = {}
    answered = Answered(stand_ins)
    if asked.request is not None:
        answered.logged = await flush(state, runtime)  # the turn's message first, in the log
        state = {**state, **answered.logged}  # type: ignore[typeddict-item]
        tools = runtime.context.resources.tools
        typed = typed_answers(state, last)
        for number, answer in enumerate(typed, 1):
            if await _put(runtime, state, last, asked, number) is not None:
                await log_exchange(
                    runtime, state, f"{question_id(last, number)}:answer", "user", answer
                )
                if (verdict := reading(answer, asked, tools)) is not None:
                    verdicts = dict.fromkeys(asked.call_ids, verdict)
                    answered.new_request = answer if verdict == "new" else None
        times = len(typed)
        while not verdicts:
            times += 1
            put = await _put(runtime, state, last, asked, times)
            log.info("confirmation_asked", tasks=len(asked.call_ids), asked=times)
            value = interrupt(put or asked.put(times))
            if put is None:  # answered before the tasks changed: put the new question
                continue
            key = question_id(last, times)
            answered.shown.append(AIMessage(put["question"], id=key))
            verdicts, text = decisions(value, asked, tools)
            if text is not None:
                await log_exchange(runtime, state, f"{key}:answer", "user", text)
                answered.shown.append(HumanMessage(text, id=f"{key}:answer"))
                if verdicts and next(iter(verdicts.values())) == "new":
                    answered.new_request = text
    for call in last.tool_calls:
        call_id = call.get("id") or ""
        confirm = confirm_of(call, runtime)
        if confirm is None:
            continue
        if (error := asked.missing.get(call_id)) is not None:
            stand_ins[call_id] = tool_error(call, error)
        elif verdicts.get(call_id) != "yes":
            stand_ins[call_id] = _cancelled(call, confirm)
    return answered


async def _said_yes(last: AIMessage, runtime: Runtime[KeelContext]) -> bool:
    """One of ``last``'s calls that need a yes has run: the yes was given (a run of the turn cut
    off after it; the ledger gives the calls that ran their results again, and runs the rest).
    """  # noqa: D205
    ctx = runtime.context
    for call in last.tool_calls:
        if confirm_of(call, runtime) is not None:
            key = call_key(last, call.get("id"))
            if await recall(ctx.resources.store.db, ctx.user_id, key) is not None:
                return True
    return False


async def _put(
    runtime: Runtime[KeelContext], state: KeelState, last: AIMessage, asked: Asked, times: int
) -> ApprovalRequest | None:
    """The ``times``-th question about ``last``'s calls, logged as it is put; None when it was put
    before in other words (the tasks changed since: an answer to it is no answer to this one).
    """  # noqa: D205
    put, key = asked.put(times), question_id(last, times)
    ctx = runtime.context
    before = await ctx.resources.messages.content_of(conversation_id(runtime), key)
    if before is not None and before != put["question"]:
        log.info("confirmation_changed", asked=times)
        return None
    if before is None:
        await log_exchange(runtime, state, key, "assistant", put["question"])
    return put


def reading(text: str, asked: Asked, tools: Sequence[BaseTool]) -> Verdict | None:
    """What a typed answer says (None: it is unclear, and the question is put again).

    A new request instead of an answer ("add eggs", "delete task 3 instead") counts as a no,
    whatever yes words it holds; one about the question's own tasks ("yes, delete it") does not.
    """
    if _new_request(text, asked, tools):
        return "new"
    return answer_of(text)


def decisions(
    value: Any, asked: Asked, tools: Sequence[BaseTool]
) -> tuple[dict[str, Verdict], str | None]:
    """The verdict on each asked call from a resume value, and the text answered (if it was one).

    ``{"decisions": [...]}`` holds one decision a call (``approve`` or ``reject``), or one for
    them all; anything else is read as a typed answer.
    """
    if isinstance(value, dict) and isinstance(value.get("decisions"), list):
        given = [d.get("type") if isinstance(d, dict) else None for d in value["decisions"]]
        if len(given) == 1:
            given = given * len(asked.call_ids)
        if len(given) != len(asked.call_ids) or not set(given) <= {"approve", "reject"}:
            return {}, None  # asked again: only approve or reject, one for each call or for all
        return {
            call_id: ("yes" if d == "approve" else "no")
            for call_id, d in zip(asked.call_ids, given, strict=True)
        }, None
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    verdict = reading(text, asked, tools)
    return (dict.fromkeys(asked.call_ids, verdict) if verdict else {}), text


def _new_request(text: str, asked: Asked, tools: Sequence[BaseTool]) -> bool:
    """``text`` asks for something the question was not about."""
    assert asked.request is not None
    actions = asked.request["action_requests"]
    asked_tools = {a["name"] for a in actions}
    task_ids = [a["change"]["task_id"] for a in actions]
    for intent in parse_intents(text, tools):
        if intent.tool not in asked_tools:
            return True
        if intent.task_id is not None and intent.task_id not in task_ids:
            return True
        if intent.needs_lookup and not intent.refers_back and intent.select is None:
            return True
    return False


def carried_on(text: str, last: AIMessage) -> HumanMessage:
    """A new request given instead of an answer, as the window's next request (logged already)."""
    return HumanMessage(
        text, id=f"{call_key(last, 'confirmation')}:new", additional_kwargs={SYNTHETIC: True}
    )
