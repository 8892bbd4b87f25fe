"""A message sent with an idempotency key runs at most once; a retry gets the first answer.

``run_once`` is what the API (REST, SSE, WebSocket) and ``keel chat`` call for a keyed message,
holding the conversation's turn lock. The key and a digest of the content are noted before the
turn runs, the result after it. A retry of the same key is answered from what is known:

- the result, once the turn ended;
- else the checkpoint, when the message reached one (the state keeps the latest message's key):
  a turn cut off mid-way is finished first (its tool calls already done are not run again), a
  turn that ended before its result was noted is read back;
- else the message never reached a checkpoint, so none of its tools ran: it runs now.

The same key with other content is refused (``KeyReused``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from keel.checkpoints.requests import RequestStore, digest
from keel.graphs.builder import KeelGraph
from keel.graphs.result import TurnResult, turn_result
from keel.graphs.runner import recover_turn, thread_config
from keel.nodes.support.context import KeelContext


class KeyReused(ValueError):
    """An idempotency key sent again with a different message."""

    code = "idempotency_key_reused"

    def __init__(self) -> None:
        """Say what is wrong."""
        super().__init__(
            "this Idempotency-Key was used for a different message; send a new key for a new "
            "message, or the same message to retry it"
        )


async def run_once(
    graph: KeelGraph,
    conversation_id: str,
    content: str,
    context: KeelContext,
    key: str,
    requests: RequestStore,
    run: Callable[[str], Awaitable[TurnResult]],
) -> TurnResult:
    """Run the message sent with ``key`` unless it ran; ``run(key)`` runs the turn.

    ``run`` is ``run_turn`` for this message with the caller's options and ``request_key=key``.
    """
    known = await requests.get(conversation_id, key)
    if known is not None:
        if known.content_sha256 != digest(content):
            raise KeyReused
        if known.result is not None:
            return _replayed(TurnResult.model_validate_json(known.result))
        answered = await _from_checkpoint(graph, conversation_id, context, key)
        if answered is not None:
            await requests.finish(conversation_id, key, answered.model_dump_json())
            return _replayed(answered)
    else:
        await requests.start(conversation_id, key, content)
    result = await run(key)
    await requests.finish(conversation_id, key, result.model_dump_json())
    return result


def _replayed(result: TurnResult) -> TurnResult:
    result.replayed = True
    return result


async def _from_checkpoint(
    graph: KeelGraph, conversation_id: str, context: KeelContext, key: str
) -> TurnResult | None:
    """The answer of the keyed message from the checkpoint; None when it never reached one."""
    snap = await graph.aget_state(thread_config(conversation_id))
    if snap.values.get("request_key") != key:
        return None
    finished = await recover_turn(graph, conversation_id, context)
    if finished is not None:
        return finished
    return turn_result(conversation_id, snap.values, snap.interrupts, [])
