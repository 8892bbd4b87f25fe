"""WS /v1/conversations/{id}/ws: the chat over a WebSocket.

In: ``{"content": "...", "idempotency_key": "...", "checkpoint_id": "..."}`` (the key optional:
with it, the message runs at most once; the checkpoint optional: the message runs from it, as
over HTTP) or ``{"action": "reset"}``. Out: ``{"type": "chat" | "status" | "reset" | "event" |
"reminder" | "error", "data": {...}}``; a ``reminder`` frame comes when keel says a reminder in
the conversation (its data as ``GET /v1/reminders`` gives it), whenever that is. Authenticate
with ``Authorization: Bearer <key>`` or, for browsers that cannot set headers, ``?token=<key>``.
A conversation deleted while its socket is open answers the next frame with
``conversation_not_found`` and closes the socket.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import uuid
from collections.abc import Mapping

import structlog
from fastapi import APIRouter, WebSocket, WebSocketDisconnect
from fastapi.security import HTTPAuthorizationCredentials
from pydantic import ValidationError

from keel.api.deps import bearer, user_of
from keel.api.errors import TURN_FAILED, APIError, ConversationBusy, check_size
from keel.api.message_schemas import KEY_PATTERN, NewMessage
from keel.api.prometheus import REFUSED
from keel.api.routers.tasks import said_since
from keel.api.service import Service
from keel.checkpoints.conversation_store import ConversationNotFound
from keel.checkpoints.locks import ConversationLocked
from keel.checkpoints.trouble import trouble_of
from keel.graphs.result import reset_answer
from keel.graphs.run_turn import CheckpointNotKept
from keel.nodes.event_types import StreamEvent

router = APIRouter(prefix="/v1/conversations", tags=["websocket"])

CLOSE_POLICY_VIOLATION = 1008
CLOSE_GOING_AWAY = 1001
CLOSE_TRY_AGAIN_LATER = 1013
IDLE = {"code": "idle_timeout", "message": "closed after a silence (KEEL_WS_IDLE_SECONDS)"}
TOO_MANY = {
    "code": "too_many_connections",
    "message": "this user has the most WebSockets allowed open (KEEL_WS_PER_USER); close one",
}
BAD_KEY = "idempotency_key must be 1 to 200 visible ASCII characters"
BINARY_FRAME = {"code": "invalid_frame", "message": "send text frames holding JSON objects"}
log = structlog.get_logger(__name__)


def _first_error(exc: ValidationError) -> str:
    return str(exc.errors()[0]["msg"]).removeprefix("Value error, ")


async def _send(ws: WebSocket, kind: str, data: Mapping[str, object]) -> None:
    await ws.send_json({"type": kind, "data": data})


async def _send_if_open(ws: WebSocket, kind: str, data: Mapping[str, object]) -> None:
    try:
        await _send(ws, kind, data)
    except Exception:  # the client left; the turn goes on without it
        return


async def _authorize(ws: WebSocket, service: Service, conversation_id: str) -> str | None:
    token = ws.query_params.get("token")  # browsers cannot set a WebSocket's headers
    try:
        conversation_id = str(uuid.UUID(conversation_id))  # any spelling REST takes
        credentials = await bearer(ws)
        if credentials is None and token:
            credentials = HTTPAuthorizationCredentials(scheme="Bearer", credentials=token)
        user = user_of(service, credentials)
        await service.conversations.require(conversation_id, user)
    except (APIError, ConversationNotFound, ValueError) as exc:
        await _send(ws, "error", {"code": "not_allowed", "message": str(exc)})
        await ws.close(code=CLOSE_POLICY_VIOLATION)
        return None
    return user


async def _handle(ws: WebSocket, service: Service, cid: str, user: str, raw: str) -> None:
    try:
        message = json.loads(raw)
        if not isinstance(message, dict):
            raise ValueError
    except (ValueError, RecursionError):  # not JSON, or nested too deep to read
        await _send(ws, "error", {"code": "invalid_json", "message": "send a JSON object"})
        return
    if message.get("action") == "reset":  # a turn whose input is the reset command
        result = await service.turns.take(cid, user, "", command={"command": "reset"})
        await _send(ws, "reset", dict(reset_answer(result)))
        return
    content = message.get("content")
    if not isinstance(content, str) or not content.strip():
        await _send(
            ws, "error", {"code": "EMPTY_MESSAGE", "message": "Message content cannot be empty"}
        )
        return
    start = message.get("checkpoint_id")
    try:
        zone = NewMessage(
            content=content, checkpoint_id=start, timezone=message.get("timezone")
        ).timezone
    except ValidationError as exc:
        await _send(ws, "error", {"code": "invalid_request", "message": _first_error(exc)})
        return
    check_size(service.settings.max_message_chars, content)
    key = message.get("idempotency_key")
    if key is not None and not (isinstance(key, str) and re.fullmatch(KEY_PATTERN, key)):
        await _send(ws, "error", {"code": "invalid_request", "message": BAD_KEY})
        return

    async def sink(event: StreamEvent) -> None:
        await _send_if_open(ws, "event", event)

    try:  # the turn runs on if the client leaves
        task = await service.turns.start(
            cid, user, content, sink, key, from_checkpoint=start, timezone=zone
        )
    except CheckpointNotKept as exc:
        await _send(ws, "error", {"code": exc.code, "message": str(exc)})
        return
    await _send_if_open(ws, "status", {"status": "thinking"})
    result = await asyncio.shield(task)
    await _send_if_open(ws, "chat", result.model_dump(mode="json"))


@router.websocket("/{conversation_id}/ws")
async def chat_socket(ws: WebSocket, conversation_id: str) -> None:
    """Chat with keel over a WebSocket."""
    service: Service = ws.app.state.service
    await ws.accept()
    user = await _authorize(ws, service, conversation_id)
    if user is None:
        return
    ticket = await service.sockets.take(user, service.settings.ws_per_user)
    if ticket is None:
        await _send(ws, "error", TOO_MANY)
        await ws.close(code=CLOSE_TRY_AGAIN_LATER)
        return
    try:
        await _serve(ws, service, str(uuid.UUID(conversation_id)), user)
    finally:
        service.sockets.give_back(user, ticket)


async def _reminders(ws: WebSocket, service: Service, conversation_id: str, user: str) -> None:
    """Send each reminder said in the conversation while the socket is open, as it is said."""
    since = service.resources.clock()
    with contextlib.suppress(WebSocketDisconnect, RuntimeError):  # closed: nothing to tell
        async for reminder in said_since(service, user, since, conversation_id):
            await ws.send_json({"type": "reminder", "data": reminder})


async def _serve(ws: WebSocket, service: Service, conversation_id: str, user: str) -> None:
    """Answer the socket's frames until it closes, or stays silent too long."""
    await _send(ws, "status", {"status": "connected", "conversation_id": conversation_id})
    told = asyncio.create_task(_reminders(ws, service, conversation_id, user))
    try:
        await _answer(ws, service, conversation_id, user)
    finally:
        told.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await told


async def _answer(ws: WebSocket, service: Service, conversation_id: str, user: str) -> None:
    """Answer the socket's frames until it closes, or stays silent too long."""
    idle = service.settings.ws_idle_seconds
    try:
        while True:
            try:
                async with asyncio.timeout(idle):  # no task of its own: a frame is taken at once
                    frame = await ws.receive()
            except TimeoutError:
                await _send_if_open(ws, "error", IDLE)
                await ws.close(code=CLOSE_GOING_AWAY)
                return
            if frame["type"] == "websocket.disconnect":
                return
            if frame.get("text") is None:
                await _send(ws, "error", BINARY_FRAME)
                continue
            try:
                await _handle(ws, service, conversation_id, user, frame["text"])
            except ConversationNotFound as exc:  # deleted meanwhile: nothing more to say here
                await _send_if_open(ws, "error", {"code": exc.code, "message": str(exc)})
                await ws.close(code=CLOSE_POLICY_VIOLATION)
                return
            except ConversationLocked as exc:
                busy = ConversationBusy(str(exc))
                REFUSED.labels(str(busy.status), busy.code).inc()
                await _send(ws, "error", {"code": busy.code, "message": busy.message})
            except APIError as exc:
                if exc.status in (409, 503):
                    REFUSED.labels(str(exc.status), exc.code).inc()
                await _send(ws, "error", {"code": exc.code, "message": exc.message})
            except Exception as exc:  # the turn failed: say so, keep the socket
                await _send_if_open(ws, "error", _failure(exc))
    except WebSocketDisconnect:
        return


def _failure(exc: Exception) -> dict[str, str]:
    if trouble := trouble_of(exc):
        REFUSED.labels("503", trouble.value).inc()
        log.warning(trouble.value, error=type(exc).__name__)
        return {"code": trouble.value, "message": trouble.message}
    log.exception("websocket_turn_failed", error=type(exc).__name__)
    return {"code": "turn_failed", "message": TURN_FAILED}
