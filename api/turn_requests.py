"""Running a turn for the API: ownership checked, size checked, one turn at a time.

Used by the message endpoint (JSON and SSE) and the WebSocket. ``start_turn`` takes the
conversation's turn lock (409 when busy, or a bounded wait with ``KEEL_DOUBLE_TEXT=enqueue``) and
runs the turn in a task of the service's own that releases the lock when the turn ends: a client
that disconnects mid-turn (SSE, WebSocket, plain HTTP) neither cuts the turn short nor keeps the
conversation locked after it. While it runs, ``service.stops`` holds the event that stops it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

from keel.api import metrics
from keel.api.errors import APIError, ConversationBusy
from keel.api.service import Service
from keel.checkpoints.locks import ConversationLocked
from keel.graphs.requests import run_once
from keel.graphs.result import TurnResult
from keel.graphs.runner import EventSink, run_turn
from keel.nodes.support.state import TurnCommand

KEY_PATTERN = r"^[\x21-\x7e]+$"
"""An idempotency key: 1 to 200 visible ASCII characters."""


def check_size(service: Service, content: str) -> None:
    """413 when the message is longer than the configured limit."""
    limit = service.settings.max_message_chars
    if len(content) > limit:
        raise APIError(
            413,
            "message_too_large",
            f"message is {len(content)} characters; the limit is {limit}",
        )


@asynccontextmanager
async def turn_slot(service: Service, conversation_id: str) -> AsyncIterator[None]:
    """Hold the conversation for a turn, or 409 (reject) / wait (enqueue)."""
    settings = service.settings
    wait = settings.enqueue_timeout_seconds if settings.double_text == "enqueue" else 0.0
    asked = time.monotonic()
    try:
        async with service.locks.hold(conversation_id, wait=wait):
            metrics.LOCK_WAIT.observe(time.monotonic() - asked)
            yield
    except ConversationLocked:
        metrics.LOCK_WAIT.observe(time.monotonic() - asked)
        raise ConversationBusy(conversation_id) from None


async def start_turn(
    service: Service,
    conversation_id: str,
    user: str,
    content: str,
    sink: EventSink | None = None,
    key: str | None = None,
    command: TurnCommand | None = None,
) -> asyncio.Task[TurnResult]:
    """Take the turn slot (or raise ConversationBusy) and start the turn in its own task.

    A message with an idempotency ``key`` runs at most once (``keel.graphs.requests``). A
    ``command`` (reset, reopen) runs as the turn's input; it is counted by its events, not as a
    turn.
    """
    stack = AsyncExitStack()
    await stack.enter_async_context(turn_slot(service, conversation_id))

    stop = service.stops[conversation_id] = asyncio.Event()

    async def turn() -> TurnResult:
        async with stack:
            result, began = None, time.monotonic()
            try:
                context = service.turn_context(user)
                start = await service.turn_start(conversation_id)

                async def run(request_key: str | None = None) -> TurnResult:
                    return await run_turn(
                        service.graph,
                        conversation_id,
                        content,
                        context,
                        sink,
                        retention=service.retention,
                        start=start,
                        stop=stop,
                        request_key=request_key,
                        command=command,
                    )

                if key is None:
                    result = await run()
                else:
                    result = await run_once(
                        service.graph, conversation_id, content, context, key, service.requests, run
                    )
            finally:
                service.stops.pop(conversation_id, None)
                if command is None:
                    metrics.count_turn(result, time.monotonic() - began, service.resources.tools)
                elif result is not None:
                    metrics.count_events(result.events)
                metrics.count_pool(service.pool_stats())
                await service.remember(conversation_id, result)
            return result

    return service.track(turn())


async def take_turn(
    service: Service,
    conversation_id: str,
    user: str,
    content: str,
    key: str | None = None,
    command: TurnCommand | None = None,
) -> TurnResult:
    """Run one turn to its end and return its result (the turn goes on if the caller leaves)."""
    task = await start_turn(service, conversation_id, user, content, key=key, command=command)
    return await asyncio.shield(task)
