"""One turn on a conversation whose turn lock the caller holds, from where it stands to after.

``run_turn`` is what ``keel.graphs.turns.Turns`` runs once it holds the conversation (and what
the evaluation commands and tests call directly). In order:

1. **Where it stands.** From memory when this process's last turn left the conversation and
   nothing changed it since (``Turns`` tells, from what its lock read), else from the
   checkpoint.
2. **The turn before, settled.** A turn cut off mid-way (its process died: the newest checkpoint
   has a step left to run) is run on from there first; the outcome of the message that turn ran
   for is recorded under its idempotency key, as is the outcome of a turn that ended but whose
   outcome was never recorded. So a keyed retry is answered from it whichever message came first.
3. **Exactly once.** A message sent with an idempotency key that already ran is answered from its
   recorded outcome (``replayed``); the same key with another message is refused (``KeyReused``).
4. **The run.** ``keel.graphs.runner`` runs the graph, once, streaming events and tokens to a
   sink; LangGraph checkpoints it as it goes.
5. **After.** The outcome is recorded under the key. (Old checkpoints are pruned by the saver
   itself: ``keel.checkpoints.retention``.)
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import replace

import structlog
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.constants import START
from langgraph.types import StateSnapshot

from keel.checkpoints.branches import BEGINNING, CheckpointNotKept
from keel.checkpoints.requests import RequestStore, digest
from keel.graphs.builder import KeelGraph
from keel.graphs.resources import prepared
from keel.graphs.result import TurnResult, turn_result
from keel.graphs.runner import EventSink, recover, stream_turn, thread_config
from keel.nodes.run_context import KeelContext, TurnStart
from keel.nodes.state.schema import TurnCommand
from keel.nodes.support.previews import preview
from keel.tools.crash_points import pause_point

log = structlog.get_logger(__name__)


class KeyReused(ValueError):
    """An idempotency key sent again with a different message."""

    code = "idempotency_key_reused"

    def __init__(self) -> None:
        """Say what is wrong."""
        super().__init__(
            "this Idempotency-Key was used for a different message; send a new key for a new "
            "message, or the same message to retry it"
        )


async def kept_checkpoint(graph: KeelGraph, conversation_id: str, checkpoint_id: str) -> None:
    """Raise ``CheckpointNotKept`` unless a turn can run from ``checkpoint_id``: one the
    conversation holds, or ``BEGINNING`` (before its first checkpoint). Reads no state.
    """  # noqa: D205
    if checkpoint_id == BEGINNING:
        return
    saver = graph.checkpointer
    if not isinstance(saver, BaseCheckpointSaver):
        raise CheckpointNotKept(checkpoint_id)
    if await saver.aget_tuple(thread_config(conversation_id, checkpoint_id)) is None:
        raise CheckpointNotKept(checkpoint_id)


async def settle(
    graph: KeelGraph,
    conversation_id: str,
    context: KeelContext,
    start: TurnStart | None,
    requests: RequestStore | None,
) -> tuple[TurnStart, TurnResult | None]:
    """Step 2 and 3: where the conversation stands, the turn before finished and recorded.

    Returns the start of the new turn and the reply of a cut-off turn finished on the way.
    """
    if start is None:
        snap = await graph.aget_state(thread_config(conversation_id))
        start = TurnStart.of(snap)
        if start.cut_off and (snap.metadata or {}).get("source") == "input":  # cut off before
            # its input was taken into the state: the key is in the input
            start = replace(start, request_key=await _input_key(graph, snap))
        if start.request_key is not None and not start.cut_off and requests is not None:
            ended = turn_result(conversation_id, snap.values, snap.interrupts, [])
            await requests.settle(conversation_id, start.request_key, ended.model_dump_json())
    if not start.cut_off:
        return start, None
    recovered = await recover(graph, conversation_id, context, start)
    if (key := start.request_key) is not None and requests is not None:
        await requests.settle(conversation_id, key, recovered.model_dump_json())
    return TurnStart(await _newest(graph, conversation_id) or BEGINNING), recovered


async def _input_key(graph: KeelGraph, snap: StateSnapshot) -> str | None:
    """The idempotency key of the input a checkpoint holds, not yet taken into the state."""
    saver = graph.checkpointer
    if not isinstance(saver, BaseCheckpointSaver):
        return None
    found = await saver.aget_tuple(snap.config)
    given = found.checkpoint["channel_values"].get(START) if found is not None else None
    return given.get("request_key") if isinstance(given, dict) else None


async def _newest(graph: KeelGraph, conversation_id: str) -> str | None:
    """The id of the conversation's newest checkpoint (after a cut-off turn was finished)."""
    saver = graph.checkpointer
    if not isinstance(saver, BaseCheckpointSaver):
        return None
    newest = await saver.aget_tuple(thread_config(conversation_id))
    return None if newest is None else newest.config["configurable"]["checkpoint_id"]


def _fork(from_checkpoint: str | None, start: TurnStart) -> str | None:
    """The checkpoint a turn runs from when it is not the newest (None: the newest)."""
    if not from_checkpoint or from_checkpoint == start.checkpoint_id:
        return None  # BEGINNING included, when nothing was written yet
    return from_checkpoint


async def run_turn(
    graph: KeelGraph,
    conversation_id: str,
    content: str,
    context: KeelContext,
    sink: EventSink | None = None,
    *,
    start: TurnStart | None = None,
    stop: asyncio.Event | None = None,
    key: str | None = None,
    requests: RequestStore | None = None,
    command: TurnCommand | None = None,
    held: bool = False,
    from_checkpoint: str | None = None,
) -> TurnResult:
    """Steps 2 to 6 of a turn for ``content``; the caller holds the conversation's turn lock.

    ``start``: where the conversation stands, when the caller knows it (else it is read from the
    checkpoint). ``held``: the caller took the turn lock through ``Turns``, the owner checked with
    it. A cut-off turn finished first comes back as ``recovered_reply``. Setting ``stop`` ends the
    turn at its next tool execution, with what already ran kept.
    ``key`` (an idempotency key, with ``requests`` where keyed messages are recorded) makes the
    message run at most once. ``command`` (``{"command": "reset"}``, ``{"command": "reopen",
    "topic_id": ...}``) goes in with the input instead of a message: the graph carries it out.
    ``from_checkpoint`` (one the conversation keeps, or ``BEGINNING``): the turn runs from it
    instead of the newest, the start of a new branch (an edited message) or the next turn of an
    earlier one; what tools changed since stays changed.
    """
    with structlog.contextvars.bound_contextvars(
        conversation_id=conversation_id, thread_id=conversation_id, user_id=context.user_id
    ):
        if not held:  # the caller did not take the turn lock through ``Turns`` (a test, an
            # evaluation): the conversation is the user's (made theirs if nobody's), as the
            # graph's own claim makes it for a LangGraph client
            await context.resources.conversations.claim(conversation_id, context.user_id)
        start, recovered = await settle(graph, conversation_id, context, start, requests)
        fork = _fork(from_checkpoint, start)
        if fork is not None and recovered is not None:  # the cut-off turn's checkpoints may have
            await kept_checkpoint(graph, conversation_id, fork)  # set off a prune that took it
        asked = content if fork is None else f"{content}\0{fork}"  # a key names both
        if key is not None and requests is not None:
            noted = await requests.get(conversation_id, key)
            if noted is not None:
                if noted.content_sha256 != digest(asked):
                    raise KeyReused
                if noted.result is not None:
                    replayed = TurnResult.model_validate_json(noted.result)
                    replayed.replayed = True
                    return replayed
                # noted, yet never reached a checkpoint (step 3 settled any that did): it runs
            else:
                await requests.start(conversation_id, key, asked)
        log.info("turn_received", message_preview=preview(content))
        request_key, turn = key, TurnStart(start.checkpoint_id or BEGINNING)
        if fork is not None:  # a new turn even when the same text was sent from there before
            request_key = key if key is not None else f"fork-{uuid.uuid4()}"
            turn = TurnStart(fork, forked=True)
        turn_input = {"content": content, "request_key": request_key, **(command or {})}
        context = context.run_by_keel(turn)
        result = await stream_turn(graph, turn_input, conversation_id, context, sink, stop, fork)
        if recovered is not None:
            result.recovered_reply = recovered.reply
        if key is not None and requests is not None:
            pause_point("before_request_recorded", (await prepared(context)).resources.pause_at)
            await requests.finish(conversation_id, key, result.model_dump_json())
        log.info(
            "turn_finished",
            complete=result.complete,
            message_preview=preview(content),
            reply_preview=preview(result.reply),
            tools=[call["name"] for call in result.tool_calls],
        )
        return result
