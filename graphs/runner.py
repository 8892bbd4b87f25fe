"""The graph runs of one turn, and reading a conversation's state.

``stream_turn`` runs a turn's input through the graph (the graph itself decides what the message
is: the answer to a waiting confirmation, or a new turn). It stops before every tool execution so
that the tool calls are stored first (and there honours a caller's request to stop the turn), and
collects the events and tokens. ``recover`` finishes a turn a crash cut off. The turn around them
- lock, idempotency, recording, pruning - is ``keel.graphs.turn``'s. ``snapshot`` reads a
conversation's state for ``/state`` and the API.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import structlog
from langchain_core.messages import AIMessage, AIMessageChunk, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.types import Durability, Interrupt, StateSnapshot, StreamMode

from keel.checkpoints.topics import TopicRow
from keel.checkpoints.trouble import trouble_of
from keel.graphs.builder import KeelGraph
from keel.graphs.result import Snapshot, TurnResult, pending_confirmation, snapshot_of, turn_result
from keel.nodes.events import STREAMED_ONLY, Event, StreamEvent, token
from keel.nodes.response import pending_tool_calls
from keel.nodes.run_context import KeelContext
from keel.nodes.state.machine import AgentState
from keel.nodes.state.schema import TurnOutput, turn_start
from keel.nodes.support.previews import preview

log = structlog.get_logger(__name__)

DURABILITY: Durability = "exit"
"""A run writes its checkpoint when it stops, not after every step: one write instead of ten."""
CHECKPOINT_BEFORE = ["tool_execution"]
"""The turn stops (and so checkpoints) before every tool execution and goes on at once. The model's
tool calls, with their ids, are stored before any tool changes anything: a process killed after
that re-runs the same calls on the next call, and the tool-call ledger answers those that already
ran. A process killed before it loses only the unanswered message, with nothing done."""
MAX_RUNS = 50
"""Stops before tool execution in one turn, at most (the loop limit ends a turn long before)."""
STREAM_MODES: list[StreamMode] = ["custom", "values"]
"""Events and the state after each step: nothing else is read (no per-node "updates")."""
RESULT_KEYS = list(TurnOutput.__annotations__)
"""The keys of the state a turn's result is read from: the "values" stream carries only these."""
TOKENS: StreamMode = "messages"
"""Tokens are streamed only to a caller that listens."""
INTERRUPT = "__interrupt__"  # the key of a question's interrupts in a "values" chunk


def thread_config(conversation_id: str) -> RunnableConfig:
    """The LangGraph config that addresses a conversation's thread."""
    return {"configurable": {"thread_id": conversation_id}}


def ended_turn(note: str | None = None) -> dict[str, Any]:
    """The update that ends a turn from outside the nodes: RESPONSE, nothing waiting, not complete.

    Written ``as_node="response"``, the way the response node ends a turn.
    """
    return turn_start(agent_state=AgentState.RESPONSE.value, turn_over=True, turn_note=note)


NOT_RUN = "Not run: the turn was stopped before this tool call."


def stopped_before_tools(values: dict[str, Any]) -> dict[str, Any]:
    """The update that stops a turn held before its tool execution: no pending call runs.

    Written ``as_node="tool_execution"``: every call still without a result is answered "not
    run", a confirmation asked or answered is dropped with it, and the response node, seeing
    ``stop_requested``, ends the turn (logging what it said and did).
    """
    window = values.get("window", [])
    last = next((m for m in reversed(window) if isinstance(m, AIMessage)), None)
    pending = set(pending_tool_calls(window))
    calls = [c for c in (last.tool_calls if last is not None else []) if c.get("id") in pending]
    return {
        "window": [
            ToolMessage(NOT_RUN, tool_call_id=c.get("id") or "", name=c["name"], status="error")
            for c in calls
        ],
        "stop_requested": True,
        "awaiting": None,
        "answer": None,
        "confirmations": {},
        "agent_state": AgentState.TOOL_EXECUTION.value,
    }


def held_before_tools(values: dict[str, Any], interrupts: Sequence[Interrupt]) -> bool:
    """The run stopped before tool execution (``CHECKPOINT_BEFORE``), not at its end.

    A turn ends in RESPONSE, and a question stops it with an interrupt; any other stop is the
    one before tool execution (in ASSISTANT, or in TOOL_EXECUTION going back to wait or with an
    answer).
    """
    return not interrupts and values.get("agent_state") != AgentState.RESPONSE.value


EventSink = Callable[[StreamEvent], Awaitable[None]]
"""Receives, as they happen, a turn's events and the model's tokens (``token`` events)."""


async def stream_turn(
    graph: KeelGraph,
    graph_input: Any,
    conversation_id: str,
    context: KeelContext,
    sink: EventSink | None = None,
    stop: asyncio.Event | None = None,
) -> TurnResult:
    """Run the turn to its end; each stop before tool execution is checkpointed, then resumed.

    When ``stop`` is set by then, the turn ends there instead: the pending tool calls do not run;
    a model call in flight when it is set is cancelled, and the turn ends at once.
    """
    config = thread_config(conversation_id)
    deadline = time.time() + context.turn_seconds  # from now: a recovered turn gets its own
    context = context.stopping_on(stop, deadline)  # a stop cancels a model call in flight too
    events: list[Event] = []
    values: dict[str, Any] = {}
    interrupts: Sequence[Interrupt] = ()
    for _ in range(MAX_RUNS):
        interrupts = ()  # a run that stops before tools has none
        stream: AsyncIterator[Any] = graph.astream(
            graph_input,
            config,
            context=context,
            stream_mode=[*STREAM_MODES, TOKENS] if sink is not None else STREAM_MODES,
            durability=DURABILITY,
            interrupt_before=CHECKPOINT_BEFORE,
            output_keys=RESULT_KEYS,
        )
        async for mode, chunk in stream:
            if mode == "values":
                if INTERRUPT in chunk:  # a question waits for its answer
                    chunk = dict(chunk)
                    interrupts = chunk.pop(INTERRUPT)
                values = chunk
            elif mode == "custom":
                if chunk["type"] not in STREAMED_ONLY:
                    events.append(chunk)
                if sink is not None:
                    await sink(chunk)
            elif sink is not None:
                message, _ = chunk  # only the assistant's text, its DONE line already out
                if isinstance(message, AIMessageChunk) and message.text:
                    await sink(token(message.text))
        if not held_before_tools(values, interrupts):
            break
        if stop is not None and stop.is_set():
            stopped = stopped_before_tools(values)
            await graph.aupdate_state(config, stopped, as_node="tool_execution")
        graph_input = None
    else:
        raise RuntimeError(f"the turn stopped before tool execution {MAX_RUNS} times")
    return turn_result(conversation_id, values, interrupts, events)


@dataclass(frozen=True)
class TurnStart:
    """Where a conversation stands before a turn, as far as running the turn goes."""

    cut_off: bool
    """A turn was cut off mid-way (its process died) and is finished first."""
    checkpoint_id: str | None = None
    """The conversation's newest checkpoint, when the caller has just looked it up."""
    request_key: str | None = None
    """The idempotency key of the last message that reached the checkpoint."""

    @classmethod
    def of(cls, snap: StateSnapshot) -> TurnStart:
        """Read it from the conversation's state.

        A turn is cut off when the checkpoint holds pending steps that are not a confirmation
        waiting for its answer: the graph resumes them from the last completed step.
        """
        cut_off = bool(snap.next) and pending_confirmation(snap) is None
        return cls(cut_off, request_key=snap.values.get("request_key"))


ABANDONED = "The previous turn could not be finished ({error}); it was left as it was."


async def recover(graph: KeelGraph, conversation_id: str, context: KeelContext) -> TurnResult:
    """Finish a cut-off turn; if it fails for good, abandon it with a note instead.

    A turn that fails the same way every time it is retried (bad data in a step) would otherwise
    fail every later message of the conversation too.
    """
    log.warning("recovering_cut_off_turn")
    try:
        return await stream_turn(graph, None, conversation_id, context)
    except Exception as exc:
        if trouble_of(exc):
            raise
        note = ABANDONED.format(error=type(exc).__name__)
        log.error("cut_off_turn_abandoned", error=type(exc).__name__, detail=preview(exc))
    await graph.aupdate_state(thread_config(conversation_id), ended_turn(note), as_node="response")
    return TurnResult(
        conversation_id=conversation_id,
        reply=note,
        agent_state=AgentState.RESPONSE.value,
        complete=False,
    )


async def snapshot(
    graph: KeelGraph, conversation_id: str, topics: Sequence[TopicRow] | None = None
) -> Snapshot:
    """The conversation's current state: agent_state, mission, todolist, topic, confirmation."""
    snap = await graph.aget_state(thread_config(conversation_id))
    return snapshot_of(conversation_id, snap, topics)
