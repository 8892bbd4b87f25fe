"""One model call of the assistant node: bounded, checked, and taken over offline when it fails.

``answer_round`` asks the run's model for the turn's next message. Every call sends ``max_tokens``
and is bounded by what is left of the turn's time budget (``turn_seconds``); a caller's stop (the
API's cancel) cancels it, and so does cancelling the turn: the provider's HTTP request is closed, so
the server stops generating. An answer that is empty or garbled (a tool that is not bound, such as a
name a server repeated in every streamed chunk, or a tool call that cannot be read, written as text
or not) is asked for once more. A provider failure (``ProviderFailed``, after the client's own
retries) or a second unusable answer hands the turn to the offline model, which finishes it from
what the turn already did (``keel.nodes.models.takeover``) and keeps it for the rest of the turn: a
fallback never happens twice in a turn, nor waits twice. The fallback is reported (a
``model_fallback`` event, which the API counts by reason) and logged with the provider's status and
a preview of its message. Each call starts with a ``round_started`` event (streamed only): a client
replaces the text streamed so far with what follows.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Container, Sequence
from dataclasses import dataclass, field
from typing import Any

import structlog
from langchain_core.callbacks import AsyncCallbackManager
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig, ensure_config
from langgraph.constants import TAG_NOSTREAM
from langgraph.runtime import Runtime

from keel.nodes.events import model_fallback, round_started
from keel.nodes.models.chat import AgentModel, ProviderFailed, said_done
from keel.nodes.models.declared import SHOWN_TOOLS, Declared
from keel.nodes.models.markers import UNUSABLE_CALL
from keel.nodes.models.rule_based import RuleBasedChatModel
from keel.nodes.models.takeover import OFFLINE, describe, finished, takeover
from keel.nodes.models.turn_messages import ran, this_turn
from keel.nodes.run_context import KeelContext
from keel.nodes.state.schema import KeelState, open_items
from keel.nodes.support.previews import preview
from keel.tools.ask_user import ASK_TOOL
from keel.tools.next_step import NEXT_STEP_TOOL
from keel.tools.spec import unheard

log = structlog.get_logger(__name__)

ATTEMPTS = 2
"""Calls of the provider's model for one round: an unusable answer is asked for once more."""


@dataclass
class Round:
    """What one round gave: the model's answer (None when there is none) and a state update."""

    reply: AIMessage | None = None
    update: dict[str, Any] = field(default_factory=dict)


class Stopped(Exception):
    """The caller stopped the turn while the model was answering."""


def garbled(reply: AIMessage, names: Container[str]) -> str | None:
    """Why ``reply`` cannot be used (``names``: the bound tools), or None when it can."""
    if reply.invalid_tool_calls or reply.response_metadata.get(UNUSABLE_CALL):
        return "bad_tool_call"
    if any(call["name"] not in names for call in reply.tool_calls):
        return "bad_tool_name"
    if not reply.tool_calls and not reply.text.strip():
        return "empty_answer"
    return None


def done_only(state: KeelState, ctx: KeelContext) -> str | None:
    """What an answer that only said DONE shows: the answer it closes (the one the model was sent
    back from), else what the turn's tools did, in their words; None when there is neither.
    """  # noqa: D205
    window = state.get("window", [])
    last = window[-1] if window else None
    if isinstance(last, AIMessage) and not last.tool_calls and last.text.strip():
        return last.text
    done = [describe(call, result, ctx.resources.tools) for call, result in ran(this_turn(window))]
    return "\n".join(done) or None


def seconds_left(state: KeelState, ctx: KeelContext) -> float:
    """What is left of the turn's time budget (infinite for a turn started without one).

    The budget counts from the turn's message (``turn_deadline``), or from when keel's runner ran
    it (the context's ``deadline``: a turn a crash cut off is finished on a budget of its own).
    """
    deadline = ctx.deadline or state.get("turn_deadline")
    return math.inf if deadline is None else deadline - time.time()


async def bounded_call(
    model: AgentModel,
    messages: Sequence[BaseMessage],
    ctx: KeelContext,
    message_id: str,
    seconds: float,
    declared: Declared | None = None,
) -> AIMessage:
    """``model``'s answer within ``seconds``; cancelled (its request closed) when the caller stops.

    ``declared``: the tools this call shows the model, in place of those bound.

    Raises:
        TimeoutError: the seconds ran out.
        Stopped: the caller stopped the turn.
    """
    if seconds <= 0:
        raise TimeoutError
    stop = ctx.stop_event
    if stop is not None and stop.is_set():
        raise Stopped
    if isinstance(model, RuleBasedChatModel):  # answers at once: nothing to bound or cancel
        return await ask(model, messages, message_id=message_id, done_marker=ctx.done_marker)
    call = asyncio.ensure_future(
        ask(
            model,
            messages,
            message_id=message_id,
            done_marker=ctx.done_marker,
            max_tokens=ctx.max_tokens,
            **shown(declared),
        )
    )
    stopper = asyncio.ensure_future(stop.wait()) if stop is not None else None
    waits = {call} if stopper is None else {call, stopper}
    try:
        done, _ = await asyncio.wait(
            waits, timeout=None if math.isinf(seconds) else seconds, return_when="FIRST_COMPLETED"
        )
    finally:
        for task in waits:
            task.cancel()  # a cancelled turn cancels the provider's request with it
    if call in done:
        return call.result()
    if stopper is not None and stopper in done:
        raise Stopped
    raise TimeoutError


def shown(declared: Declared | None) -> dict[str, Any]:
    """The request's arguments for what ``declared`` shows the model (none: what is bound)."""
    if declared is None:
        return {}
    if declared.must_call:
        return {SHOWN_TOOLS: declared.schemas, "tool_choice": "required"}
    return {SHOWN_TOOLS: declared.schemas}


async def ask(model: AgentModel, messages: Sequence[BaseMessage], **kwargs: Any) -> AIMessage:
    """``model``'s answer to ``messages``.

    keel's offline model is asked without LangChain's run around the call when no callback
    handler would hear of it (no stream of tokens, no tracer): its decision takes a fraction of
    what the run costs.
    """
    if isinstance(model, RuleBasedChatModel) and not _listened(model):
        result = await model._agenerate(list(messages), **kwargs)
        message = result.generations[0].message
        assert isinstance(message, AIMessage)
        return message
    return await model.ainvoke(list(messages), config=tokens_at_the_top(), **kwargs)


NS_SEP = "|"
"""What separates the graphs in LangGraph's ``langgraph_checkpoint_ns`` (a parent's, then its
child's)."""


def tokens_at_the_top() -> RunnableConfig | None:
    """The model call's run as one of the outermost graph's, when this node runs in a graph inside
    another (the served graph's ``turn``): LangGraph's ``messages`` stream then carries its tokens
    to a caller that streams without subgraphs too, as it did before the turn ran inside a node.
    The run's metadata is the node's, with the graph around it's namespace.
    """  # noqa: D205
    metadata = ensure_config().get("metadata") or {}
    namespace = metadata.get("langgraph_checkpoint_ns")
    if not isinstance(namespace, str) or NS_SEP not in namespace:
        return None
    outer = namespace.split(NS_SEP)[0]
    return {"metadata": {**metadata, "langgraph_checkpoint_ns": outer}}


def _listened(model: RuleBasedChatModel) -> bool:
    """A callback handler would hear of a call of ``model`` now (as LangChain configures it)."""
    config = ensure_config()
    manager = AsyncCallbackManager.configure(
        config.get("callbacks"), model.callbacks, model.verbose, config.get("tags"), model.tags
    )
    return bool(manager.handlers)


def bound_names(ctx: KeelContext) -> set[str]:
    """The tools the model may call."""
    return {t.name for t in ctx.resources.tools} | {NEXT_STEP_TOOL, ASK_TOOL}


async def offline(messages: Sequence[BaseMessage], ctx: KeelContext, reply_id: str) -> AIMessage:
    """The offline model's next message, continuing what the turn already did."""
    model = ctx.resources.fallback_model
    plan = takeover(messages, ctx.resources.tools)
    reply = None
    message_id = f"{reply_id}:offline"
    if plan.messages is not None and model is not None:
        reply = await model.ainvoke(
            plan.messages,
            config={"tags": [TAG_NOSTREAM]},  # its answer is streamed whole, as the node returns it
            message_id=message_id,
            done_marker=ctx.done_marker,
        )
        if reply.tool_calls:
            reply.response_metadata[OFFLINE] = True
            return reply
    return finished(reply, plan.done, message_id)


def said_lately(state: KeelState) -> str:
    """What the person said in the turn's window, its request and the mission it belongs to: an
    answer to a question ("friday") is the whole of its turn's request, and the mission is the
    message it completes ("add milk to the hardware list").
    """  # noqa: D205
    said = [m.text for m in state.get("window", []) if isinstance(m, HumanMessage)]
    return "\n".join([*said, state.get("request", ""), state.get("mission") or ""])


def heard(reply: AIMessage, request: str, ctx: KeelContext) -> AIMessage:
    """``reply`` without the arguments of its calls that the person's recent messages say nothing
    of (``keel.tools.spec.unheard``): a list, a date, a place or a repeat the model made up.
    """  # noqa: D205
    tools = {t.name: t for t in ctx.resources.tools}
    calls, dropped = [], {}
    for call in reply.tool_calls:
        tool_ = tools.get(call["name"])
        gone = unheard(tool_, call["args"], request) if tool_ is not None else []
        if gone:
            dropped[call["name"]] = {name: call["args"][name] for name in gone}
            call = {**call, "args": {k: v for k, v in call["args"].items() if k not in gone}}
        calls.append(call)
    if not dropped:
        return reply
    log.info("model_arguments_unheard", dropped=dropped, request_preview=preview(request))
    return reply.model_copy(update={"tool_calls": calls})


async def answer_round(
    state: KeelState,
    runtime: Runtime[KeelContext],
    reply_id: str,
    messages: Sequence[BaseMessage],
    transcript: Sequence[BaseMessage],
    declared: Declared | None = None,
) -> Round:
    """The model's answer for this round of the turn, or the update that ends the round.

    The run's model is given ``messages`` (and the tools ``declared``, when the turn declares
    them: ``keel.nodes.models.declared``); the offline model, when it takes over, ``transcript``
    (the same turn with its history as the text it reads, ``keel.nodes.assistant.model_input``).
    An answer that only says DONE shows the answer it closes or what the turn's tools did; with
    nothing to show it is kept while steps of the plan are open and the model was not sent back
    to them yet (the response node sends it back), and is unusable otherwise: a turn never ends
    complete with nothing said.

    Raises:
        ContextLengthExceeded: the provider refused the input as too long.
    """
    ctx = runtime.context
    resources = ctx.resources
    loops = state.get("loops", 0)
    if state.get("fell_back") and resources.fallback_model is not None:
        runtime.stream_writer(round_started(loops, 0))
        return Round(await offline(transcript, ctx, reply_id))
    failure = ProviderFailed("empty_answer")
    for attempt in range(ATTEMPTS):
        runtime.stream_writer(round_started(loops, attempt))
        message_id = reply_id if attempt == 0 else f"{reply_id}:retry-{attempt}"
        try:
            reply = await bounded_call(
                resources.model,
                messages,
                ctx,
                message_id,
                seconds_left(state, ctx),
                declared,
            )
        except TimeoutError:
            log.warning("turn_out_of_time", seconds=ctx.turn_seconds, loops=loops)
            return Round(update={"out_of_time": True})
        except Stopped:
            return Round(update={"stop_requested": True})
        except ProviderFailed as exc:
            failure = exc
            break
        problem = garbled(reply, bound_names(ctx))
        if problem == "empty_answer" and said_done(reply, ctx.done_marker):
            if (shown := done_only(state, ctx)) is not None:
                return Round(reply.model_copy(update={"content": shown}))
            if open_items(state.get("todolist")) and not state.get("nudges"):
                return Round(reply)  # the response node sends it back to them, once
        if problem is None:
            return Round(heard(reply, said_lately(state), ctx))
        shown = reply.text or ", ".join(c["name"] for c in reply.tool_calls) or ""
        failure = ProviderFailed(problem, None, preview(shown) or "")
        log.warning("model_answer_unusable", reason=problem, attempt=attempt, answer_preview=shown)
    return await fall_back(state, runtime, transcript, reply_id, failure)


async def fall_back(
    state: KeelState,
    runtime: Runtime[KeelContext],
    messages: Sequence[BaseMessage],
    reply_id: str,
    failure: ProviderFailed,
) -> Round:
    """Hand the turn to the offline model after ``failure`` (reported, logged, kept in state)."""
    ctx = runtime.context
    takes_over = ctx.resources.fallback_model is not None
    log.warning(
        "model_fallback",
        reason=failure.reason,
        status=failure.status,
        error_preview=preview(failure.detail),
        offline=takes_over,
    )
    if not takes_over:
        return Round(update={"model_failed": failure.reason})
    runtime.stream_writer(model_fallback(failure.reason, failure.status, failure.detail))
    runtime.stream_writer(round_started(state.get("loops", 0), ATTEMPTS))
    reply = await offline(messages, ctx, reply_id)
    return Round(reply, {"fell_back": failure.reason})
