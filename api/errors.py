"""Errors as the API answers them: ``{"error": {"code", "message"}}`` with the right status.

Domain errors (unknown conversation, busy conversation, database down) become HTTP statuses here
and nowhere else. Bad input never reaches a 500.
"""

from __future__ import annotations

import sqlite3

import psycopg
import psycopg_pool
import structlog
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from keel.api.prometheus import REFUSED
from keel.checkpoints.conversation_store import ConversationNotFound
from keel.checkpoints.locks import ConversationLocked
from keel.checkpoints.topics import TopicNotFound
from keel.checkpoints.trouble import trouble_of
from keel.graphs.run_turn import CheckpointNotKept, KeyReused

log = structlog.get_logger(__name__)


class APIError(Exception):
    """An error with its HTTP status and a stable code."""

    def __init__(self, status: int, code: str, message: str) -> None:
        """Keep status, code and message."""
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


class ConversationBusy(APIError):
    """A turn already runs on this conversation."""

    def __init__(self, conversation_id: str) -> None:
        """Say which conversation is busy."""
        super().__init__(
            409,
            "conversation_busy",
            f"a turn is already running on conversation {conversation_id}; retry when it ends",
        )


def check_size(limit: int, content: str) -> None:
    """413 when the message is longer than ``limit`` characters (KEEL_MAX_MESSAGE_CHARS)."""
    if len(content) > limit:
        raise APIError(
            413,
            "message_too_large",
            f"message is {len(content)} characters; the limit is {limit}",
        )


def error_body(code: str, message: str) -> dict[str, dict[str, str]]:
    """The JSON body of every error."""
    return {"error": {"code": code, "message": message}}


def _json(status: int, code: str, message: str) -> JSONResponse:
    retry = None
    if status in (409, 503):
        retry = {"Retry-After": str(RETRY_AFTER_SECONDS)}
        REFUSED.labels(str(status), code).inc()
    return JSONResponse(error_body(code, message), status_code=status, headers=retry)


def _validation_message(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err.get("loc", ()) if p != "body")
        parts.append(f"{where}: {err.get('msg')}" if where else str(err.get("msg")))
    return "; ".join(parts) or "invalid request"


RETRY_AFTER_SECONDS = 1
TURN_FAILED = (
    "the turn failed and may have run in part; retry it with the same Idempotency-Key to have "
    "it run at most once"
)
UNPARSABLE_BODY = "There was an error parsing the body"
"""FastAPI's 400 for a body its JSON reader gave up on (anything but a plain syntax error)."""


DATABASE_ERRORS: tuple[type[Exception], ...] = (
    psycopg.Error,
    psycopg_pool.PoolTimeout,
    sqlite3.Error,
    ConnectionError,
    OSError,
)
"""Errors a database (or the way to it) raises: answered without closing the connection."""


def install_error_handlers(app: FastAPI) -> None:
    """Answer every error as JSON with its status."""

    @app.exception_handler(APIError)
    async def api_error(_: Request, exc: APIError) -> JSONResponse:
        return _json(exc.status, exc.code, exc.message)

    @app.exception_handler(ConversationLocked)
    async def busy(_: Request, exc: ConversationLocked) -> JSONResponse:
        answer = ConversationBusy(str(exc))
        return _json(answer.status, answer.code, answer.message)

    @app.exception_handler(ConversationNotFound)
    async def not_found(_: Request, exc: ConversationNotFound) -> JSONResponse:
        return _json(404, exc.code, str(exc))

    @app.exception_handler(CheckpointNotKept)
    async def checkpoint_not_kept(_: Request, exc: CheckpointNotKept) -> JSONResponse:
        return _json(404, exc.code, str(exc))

    @app.exception_handler(KeyReused)
    async def key_reused(_: Request, exc: KeyReused) -> JSONResponse:
        return _json(422, exc.code, str(exc))

    @app.exception_handler(TopicNotFound)
    async def topic_not_found(_: Request, exc: TopicNotFound) -> JSONResponse:
        return _json(404, exc.code, str(exc))

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        return _json(422, "invalid_request", _validation_message(exc))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 400 and exc.detail == UNPARSABLE_BODY:
            # invalid UTF-8, JSON nested too deep, a number too long to read: bad input like any
            return _json(422, "invalid_request", "the body is not JSON that can be read")
        codes = {401: "unauthorized", 404: "not_found", 405: "method_not_allowed"}
        return _json(exc.status_code, codes.get(exc.status_code, "http_error"), str(exc.detail))

    async def unexpected(_: Request, exc: Exception) -> JSONResponse:
        if trouble := trouble_of(exc):
            log.warning(trouble.value, error=type(exc).__name__)
            return _json(503, trouble.value, trouble.message)
        log.exception("unhandled_error", error=type(exc).__name__)
        return _json(500, "internal_error", "an internal error occurred")

    # The database's errors are answered by a handler of their own classes, which leaves the
    # connection open for the client's next request; the catch-all handler of ``Exception``
    # (Starlette's last resort) answers too, but then closes the connection.
    for database_error in DATABASE_ERRORS:
        app.add_exception_handler(database_error, unexpected)
    app.add_exception_handler(Exception, unexpected)
