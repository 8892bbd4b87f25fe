"""Running a turn for the API: ownership checked, size checked, one turn at a time.

Used by the message endpoint (JSON and SSE) and the WebSocket. The per-conversation lock is held
in the database, so two server processes serialise turns on one conversation too.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from api.errors import APIError, ConversationBusy
from api.service import Service
from checkpoints.locks import ConversationLocked
from graphs.turn import EventSink, TurnResult, run_turn


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
    try:
        async with service.locks.hold(conversation_id, wait=wait):
            yield
    except ConversationLocked:
        raise ConversationBusy(conversation_id) from None


async def take_turn(
    service: Service, conversation_id: str, user: str, content: str, sink: EventSink | None = None
) -> TurnResult:
    """Run one turn (the caller holds the turn slot)."""
    return await run_turn(service.graph, conversation_id, content, service.turn_context(user), sink)
