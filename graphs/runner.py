"""The graph run of one turn, finishing a cut-off turn, and reading a conversation's state.

``stream_turn`` runs a turn's input through the graph in one run (the graph itself decides what
the message is: a command, the answer to a waiting confirmation, or a new turn) and collects the
events and tokens. LangGraph checkpoints the run before each of its steps ("sync"): the graph
(``keel.graphs.builder.served``) takes a few a turn, the model's tool calls among them before any
runs. So a turn whose process died mid-way stands at a checkpoint with a step left to run, which
the next turn finds and runs on first (``recover``). A caller's stop ends the turn at its next tool
execution, or cancels the model call in flight. The turn around them - lock,
idempotency, recording, pruning - is ``keel.graphs.run_turn``'s. ``snapshot`` reads a conversation's
state for ``/state`` and the API.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, cast

import structlog
from langchain_core.messages import AIMessageChunk
from langchain_core.runnables import RunnableConfig
from langgraph.types import Durability, Interrupt, StateSnapshot, StreamMode

from keel.checkpoints.branches import BEGINNING, CheckpointNotKept
from keel.checkpoints.topics import TopicRow
from keel.checkpoints.trouble import trouble_of
from keel.graphs.builder import KeelGraph, ending_node
from keel.graphs.result import Snapshot, TurnResult, snapshot_of, turn_result
from keel.nodes.event_types import STREAMED_ONLY, Event, StreamEvent
from keel.nodes.events import token
from keel.nodes.run_context import KeelContext, TurnStart
from keel.nodes.state.machine import AgentState
from keel.nodes.state.schema import KeelState, TurnOutput, turn_start
from keel.nodes.support.previews import preview
from keel.nodes.support.waiting import calls_to_run
from keel.nodes.tool_execution import stopped

log = structlog.get_logger(__name__)

DURABILITY: Durability = "sync"
"""Each step's checkpoint is written before the next step starts: no tool acts on calls that
are not checkpointed. The graph keel runs takes a few steps a turn (``served``)."""
STREAM_MODES: list[StreamMode] = ["custom", "values"]
"""Events and the state after each step: nothing else is read (no per-node "updates")."""
RESULT_KEYS = list(TurnOutput.__annotations__)
"""The keys of the state a turn's result is read from: the "values" stream carries only these."""
TOKENS: StreamMode = "messages"
"""Tokens are streamed only to a caller that listens."""
INTERRUPT = "__interrupt__"  # the key of a question's interrupts in a "values" chunk


def thread_config(conversation_id: str, checkpoint_id: str | None = None) -> RunnableConfig:
    """The LangGraph config that addresses a conversation's thread (at one of its checkpoints)."""
    if checkpoint_id is None:
        return {"configurable": {"thread_id": conversation_id}}
    return {"configurable": {"thread_id": conversation_id, "checkpoint_id": checkpoint_id}}


def ended_turn(note: str | None = None) -> dict[str, Any]:
    """The update that ends a turn from outside the nodes: RESPONSE, nothing waiting, not complete.

    Written as the node that ends a turn (``ending_node``).
    """
    return turn_start(agent_state=AgentState.RESPONSE.value, turn_over=True, turn_note=note)


EventSink = Callable[[StreamEvent], Awaitable[None]]
"""Receives, as they happen, a turn's events and the model's tokens (``token`` events)."""


async def stream_turn(
    graph: KeelGraph,
    graph_input: Any,
    conversation_id: str,
    context: KeelContext,
    sink: EventSink | None = None,
    stop: asyncio.Event | None = None,
    checkpoint_id: str | None = None,
) -> TurnResult:
    """Run the turn to its end in one graph run, LangGraph checkpointing it as it goes.

    When ``stop`` is set, the turn ends at its next tool execution (the pending tool calls do not
    run); a model call in flight when it is set is cancelled, and the turn ends at once.
    ``checkpoint_id``: the turn runs from that checkpoint instead of the newest (a fork: LangGraph
    writes the turn's checkpoints after it, and its last becomes the newest).
    """
    config = thread_config(conversation_id, checkpoint_id)
    deadline = time.time() + context.turn_seconds  # from now: a recovered turn gets its own
    context = context.stopping_on(stop, deadline)  # a stop cancels a model call in flight too
    events: list[Event] = []
    values: dict[str, Any] = {}
    interrupts: Sequence[Interrupt] = ()
    stream: AsyncIterator[Any] = graph.astream(
        graph_input,
        config,
        context=context,
        stream_mode=[*STREAM_MODES, TOKENS] if sink is not None else STREAM_MODES,
        durability=DURABILITY,
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
    return turn_result(conversation_id, values, interrupts, events)


ABANDONED = "The previous turn could not be finished ({error}); it was left as it was."


async def recover(
    graph: KeelGraph, conversation_id: str, context: KeelContext, start: TurnStart
) -> TurnResult:
    """Finish a cut-off turn from where its checkpoint stands; if it fails for good, abandon it
    with a note instead (a turn that fails the same way every time it is retried, bad data in a
    step, would otherwise fail every later message of the conversation too).
    """  # noqa: D205
    log.warning("recovering_cut_off_turn", checkpoint_id=start.checkpoint_id)
    turn = TurnStart(await _started_from(graph, conversation_id), cut_off=True)
    try:
        return await stream_turn(graph, None, conversation_id, context.run_by_keel(turn))
    except Exception as exc:
        if trouble_of(exc):
            raise
        note = ABANDONED.format(error=type(exc).__name__)
        log.error("cut_off_turn_abandoned", error=type(exc).__name__, detail=preview(exc))
    ended = ended_turn(note)
    values = cast(KeelState, (await graph.aget_state(thread_config(conversation_id))).values)
    if (calls := calls_to_run(values)) is not None:  # checkpointed, never run: they never will
        ended = {**stopped(values, calls), **ended}
    await graph.aupdate_state(thread_config(conversation_id), ended, as_node=ending_node(graph))
    return TurnResult(
        conversation_id=conversation_id,
        reply=note,
        agent_state=AgentState.RESPONSE.value,
        complete=False,
    )


async def _started_from(graph: KeelGraph, conversation_id: str) -> str | None:
    """The checkpoint the conversation's newest turn started from: the one before its input's.

    None when the walk back meets a checkpoint no longer kept (pruned): an edit of the turn's
    message then has no point to run from, rather than the beginning of the conversation.
    """
    config: RunnableConfig | None = thread_config(conversation_id)
    while config is not None:
        snap = await graph.aget_state(config)
        if snap.created_at is None:  # pruned: LangGraph's empty state
            return None
        if (snap.metadata or {}).get("source") == "input":
            parent = (snap.parent_config or {}).get("configurable", {})
            return str(parent.get("checkpoint_id") or BEGINNING)
        config = snap.parent_config
    return BEGINNING


async def state_at(
    graph: KeelGraph, conversation_id: str, checkpoint_id: str | None = None
) -> StateSnapshot:
    """The conversation's state, or its state at ``checkpoint_id``: one read.

    A checkpoint the conversation does not keep (or never had) raises ``CheckpointNotKept``.
    """
    snap = await graph.aget_state(thread_config(conversation_id, checkpoint_id))
    if checkpoint_id is not None and snap.created_at is None:  # LangGraph's empty state
        raise CheckpointNotKept(checkpoint_id)
    return snap


async def snapshot(
    graph: KeelGraph,
    conversation_id: str,
    topics: Sequence[TopicRow] | None = None,
    checkpoint_id: str | None = None,
) -> Snapshot:
    """The conversation's state: agent_state, mission, todolist, topic, confirmation.

    Its current state, or the one at ``checkpoint_id`` (a branch being viewed).
    """
    snap = await state_at(graph, conversation_id, checkpoint_id)
    return snapshot_of(conversation_id, snap, topics)
