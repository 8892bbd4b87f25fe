"""Asking before a destructive tool call, and reading the answer: tool_execution's questions.

A tool declared with a ``Confirm`` (delete and rename) runs only after a yes. ``confirmed`` goes
through the assistant's calls before any runs. Unless the turn's own message said yes ("delete task
3, yes I'm sure"), the calls that need one are asked about in one question: LangGraph's
``interrupt`` with an ``ApprovalRequest`` (LangChain's human-in-the-loop request, the question in
words beside it: the question, then each change on a line of its own, "Delete task 3 - book
dentist", so every client shows what will change, in the conversation as after a reload). It is
answered by ``Command(resume=...)``, with decisions (Agent Chat UI's Approve and Reject) or with the
answer's text, or by the next message typed as a plain input (``user_input`` adds it to ``messages``
after the question, and the graph comes back here).

A question is put in two steps, so that nothing said is lost when the graph pauses: first it is
written to the log and to ``messages`` and the node returns (``Answered.waiting``: the graph
checkpoints it, with the answer that led to it), then the node runs again and pauses on it. A yes
runs the calls, a no cancels them, and a new request instead of an answer ("add eggs") cancels them
and is then carried out. An unclear answer asks again ("Please answer yes or no."); an unclear
answer to that is taken as a message of its own, so a conversation always takes a new request. An
answer counts only for the question as it was put: when the tasks changed in between (renamed,
completed elsewhere), a yes to it is no yes to the tasks as they are now, and the question is put
again, naming what changed; a no, or a new request, still cancels. A call whose task is not there
is left out of the question and answers its error. LangGraph runs the node again from its start
when it is resumed: the question is asked, and every answer read, before anything is changed.
Where the turn stands (the calls that wait, the answers typed) is read by
``keel.nodes.support.waiting``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

import structlog
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    HumanMessage,
    ToolCall,
    ToolMessage,
)
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from keel.nodes.models.markers import SYNTHETIC
from keel.nodes.run_context import KeelContext, conversation_id
from keel.nodes.state.confirmation import ConfirmationChange, approval_request
from keel.nodes.state.schema import KeelState
from keel.nodes.support.answers import Asked, Verdict, is_new, judged
from keel.nodes.support.message_log import flush, log_exchange
from keel.nodes.support.waiting import call_key, question_id, typed_answers
from keel.tools.calls import payload, run_tool_call, tool_error
from keel.tools.confirm import NAMED_MAX, Confirm, question
from keel.tools.ledger import recall
from keel.tools.spec import confirmations
from keel.tools.tasks.reads import get_todo_task
from keel.tools.tasks.store import TaskError
from keel.tools.tasks.todo import GET
from keel.tools.understanding.reading import confirms

log = structlog.get_logger(__name__)


def confirm_of(call: ToolCall, runtime: Runtime[KeelContext]) -> Confirm | None:
    """The confirmation the call's tool needs (None: it runs without asking)."""
    return confirmations(runtime.context.resources.tools).get(call["name"])


async def _probe(
    call: ToolCall, confirm: Confirm, runtime: Runtime[KeelContext]
) -> ToolMessage | dict[str, Any] | None:
    """What a call that needs a yes acts on, as it is now (the task, or what the tool's own
    ``Confirm.probe`` reads), or the error that stands in for the call when there is nothing to
    ask about; None when it acts on no task.
    """  # noqa: D205
    ctx, call_id = runtime.context, call.get("id") or ""
    if confirm.probe is not None:
        try:
            return await confirm.probe(ctx.store, ctx.user_id, dict(call["args"]))
        except TaskError as exc:
            return tool_error(call, exc.message)
    if confirm.target != "task_id":
        return None
    probe = ToolCall(
        name=GET, args={"task_id": call["args"].get("task_id")}, id=call_id, type="tool_call"
    )
    checked = await run_tool_call(probe, ctx.user_id, ctx.store, tools=[get_todo_task])
    if checked.status == "error":
        return tool_error(call, str(checked.content))
    data = payload(checked)
    if not isinstance(data, dict):
        return None
    if (same := confirm.no_change(dict(call["args"]), data)) is not None:
        return tool_error(call, same)  # nothing to ask about: a rename to the title it has
    return data


async def ask(last: AIMessage, runtime: Runtime[KeelContext]) -> Asked:
    """The one question about ``last``'s calls that need a yes, each change named in full."""
    needed = [(call, c) for call in last.tool_calls if (c := confirm_of(call, runtime)) is not None]
    missing: dict[str, str] = {}
    tasks: dict[str, dict[str, Any]] = {}
    for call, confirm in needed:
        found = await _probe(call, confirm, runtime)
        if isinstance(found, ToolMessage):
            missing[call.get("id") or ""] = str(found.content)
        elif found is not None:
            tasks[call.get("id") or ""] = found
    asks = [(call, c) for call, c in needed if (call.get("id") or "") not in missing]
    if not asks:
        return Asked(None, [], missing)
    changes = [
        (
            call["name"],
            dict(call["args"]),
            cast(ConfirmationChange, c.change(call["args"], tasks.get(call.get("id") or ""))),
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
    """What joins ``messages``: a question as it is put, an answer given through
    ``Command(resume=...)``."""
    new_request: str | None = None
    """A new request given instead of an answer: carried out once the calls are cancelled."""
    logged: dict[str, Any] = field(default_factory=dict)
    """Where the turn's messages went in the log (``branch``), when a question was asked."""
    waiting: bool = False
    """Nothing decided yet: a question was just put (in ``shown``), to be waited on once it is
    checkpointed; no call runs."""


async def confirmed(last: AIMessage, state: KeelState, runtime: Runtime[KeelContext]) -> Answered:
    """Decide every call of ``last``: asked about (``interrupt``), run only on a yes.

    Answers typed as messages are read first, each against the question it answered. When none
    decides, the next question is put (``Answered.waiting``), or, put already, waited for.
    """
    stand_ins: dict[str | None, ToolMessage | None] = {c.get("id"): None for c in last.tool_calls}
    answered = Answered(stand_ins)
    if confirms(_request(state)) or await _said_yes(last, runtime):
        return answered
    asked = await ask(last, runtime)
    verdicts: dict[str, Verdict] = {}
    if asked.request is not None:
        answered.logged = await flush(state, runtime)  # the turn's message first, in the log
        state = {**state, **answered.logged}  # type: ignore[typeddict-item]
        verdicts = await _answers(runtime, state, last, asked, answered)
        if not verdicts:
            answered.waiting = True
            return answered
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


async def _answers(
    runtime: Runtime[KeelContext],
    state: KeelState,
    last: AIMessage,
    asked: Asked,
    answered: Answered,
) -> dict[str, Verdict]:
    """The verdicts the answers give (empty: none decides, and the next question is put)."""
    tools = runtime.context.resources.tools
    why: str | None = None
    typed = typed_answers(state, last)
    for number, said in enumerate(typed, 1):
        before = await _logged(runtime, last, number) or asked.words()
        await log_exchange(runtime, state, f"{question_id(last, number)}:answer", "user", said)
        verdicts, why, _ = judged(said, before, asked, tools)
        if verdicts:
            answered.new_request = said if is_new(verdicts) else None
            return verdicts
    number = max(len(typed) + 1, _latest_shown(state, last))
    key = question_id(last, number)
    put = await _logged(runtime, last, number)
    if put is None or not _shown(state, key):  # put it (as logged, after a crash) and return
        _put_next(answered, key, put or asked.words(why))
        if put is None:
            await log_exchange(runtime, state, key, "assistant", answered.shown[-1].text)
        return {}
    log.info("confirmation_asked", tasks=len(asked.call_ids), asked=number)
    value = interrupt(asked.put_as(put))
    verdicts, why, text = judged(value, put, asked, tools)
    if text is not None:
        await log_exchange(runtime, state, f"{key}:answer", "user", text)
        answered.shown.append(HumanMessage(text, id=f"{key}:answer"))
    if verdicts:
        answered.new_request = text if is_new(verdicts) else None
        return verdicts
    following = question_id(last, number + 1)
    _put_next(answered, following, asked.words(why))
    await log_exchange(runtime, state, following, "assistant", asked.words(why))
    return {}


def _put_next(answered: Answered, key: str, words: str) -> None:
    """Put the question ``key`` in ``words``: it joins ``messages`` before the graph waits on it."""
    log.info("confirmation_put", key_preview=key[-12:])
    answered.shown.append(AIMessage(words, id=key))


def _latest_shown(state: KeelState, last: AIMessage) -> int:
    """The number of the latest question about ``last``'s calls in ``messages`` (0: none); a
    question put after a decision it could not take has no typed answer before it.
    """  # noqa: D205
    prefix = question_id(last, 0)[:-1]
    numbers = [
        int(tail)
        for m in state.get("messages") or []
        if m.type == "ai"
        and (m.id or "").startswith(prefix)
        and (tail := (m.id or "")[len(prefix) :]).isdigit()
    ]
    return max(numbers, default=0)


def _shown(state: KeelState, key: str) -> bool:
    """The question ``key`` is in ``messages`` (checkpointed: the graph may wait on it)."""
    return any(m.id == key for m in reversed(state.get("messages") or []))


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


async def _logged(runtime: Runtime[KeelContext], last: AIMessage, number: int) -> str | None:
    """The ``number``-th question about ``last``'s calls as it was put (logged), if it was."""
    key = question_id(last, number)
    return await runtime.context.resources.messages.content_of(conversation_id(runtime), key)


def carried_on(text: str, last: AIMessage) -> HumanMessage:
    """A new request given instead of an answer, as the window's next request (logged already)."""
    return HumanMessage(
        text, id=f"{call_key(last, 'confirmation')}:new", additional_kwargs={SYNTHETIC: True}
    )
