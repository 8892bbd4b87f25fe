"""What /mcp refuses before the MCP SDK reads a body: JSON the SDK cannot take safely.

The SDK would answer several such bodies with a 500 and a traceback in the log, so ``ScreenBody``
(ASGI middleware, added by ``keel.api.mcp``) answers them first, as the specification's streamable
HTTP transport has it: HTTP 400 with a JSON-RPC error, -32700 for a body that is not JSON keel
reads (not UTF-8, a syntax error, nested more than ``MAX_DEPTH`` deep), -32602 (-32600 outside
``params``) for JSON holding what no tool can take (a lone surrogate, an integer of more than
``MAX_DIGITS`` digits). That is the SDK's own answer to a body it cannot parse or validate, so
every such body gets one shape. When the problem is in the ``params`` of a request whose id can
be read, the answer is that request's JSON-RPC error instead (HTTP 200 and its id), as the SDK
answers other invalid params: an SDK client raises it for that call alone (``McpError``) and keeps
its session, where an HTTP error status ends the Python SDK client's whole connection.
"""

from __future__ import annotations

import json
import re
from http import HTTPStatus
from typing import Any

from mcp.types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    RequestId,
)
from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

MAX_DEPTH = 64
"""Deepest nesting of arrays and objects read; MCP messages nest a few levels."""
MAX_DIGITS = 4300
"""Longest integer read (CPython's own limit for reading one): every number a tool can use."""
UNREADABLE_ID = "server-error"
"""The id of an error that answers no request, as the SDK sends it (MCP's schema has no null)."""
_SURROGATE = re.compile(r"[\ud800-\udfff]")


class _TooLong:
    """Stands for an integer of more than ``MAX_DIGITS`` digits in a parsed body."""


_TOO_LONG = _TooLong()


def _read_int(digits: str) -> int | _TooLong:
    if len(digits.lstrip("-")) > MAX_DIGITS:
        return _TOO_LONG
    try:
        return int(digits)
    except ValueError:  # the interpreter reads fewer digits (PYTHONINTMAXSTRDIGITS)
        return _TOO_LONG


def _jsonrpc_error(status: int, code: int, message: str, request_id: RequestId) -> Response:
    error = JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=code, message=message))
    return Response(
        error.model_dump_json(by_alias=True, exclude_none=True),
        status_code=status,
        media_type="application/json",
    )


def _parse_error(why: str) -> Response:
    return _jsonrpc_error(HTTPStatus.BAD_REQUEST, PARSE_ERROR, f"Parse error: {why}", UNREADABLE_ID)


TOO_DEEP = f"JSON nested more than {MAX_DEPTH} levels deep"
LONE_SURROGATE = "a string holds a lone surrogate (\\ud800 to \\udfff), which is not Unicode text"


def _problem(message: Any) -> tuple[str, bool] | None:
    """What in a parsed body no tool can take, and whether it is under ``params``; None: nothing.

    Walked without recursion: a body nested deeper than the interpreter can recurse is refused
    here rather than anywhere after.
    """
    stack: list[tuple[Any, int, bool]] = [(message, 0, False)]
    while stack:
        value, depth, in_params = stack.pop()
        if depth > MAX_DEPTH:
            return TOO_DEEP, False
        if value is _TOO_LONG:
            return f"a number has more than {MAX_DIGITS} digits", in_params
        if isinstance(value, str) and _SURROGATE.search(value):
            return LONE_SURROGATE, in_params
        if isinstance(value, dict):
            for key, item in value.items():
                below = in_params or (depth == 0 and key == "params")
                stack += [(key, depth + 1, below), (item, depth + 1, below)]
        elif isinstance(value, list):
            stack += [(item, depth + 1, in_params) for item in value]
    return None


def _request_id(message: Any) -> RequestId | None:
    """The id of the JSON-RPC request ``message``, if it is one and its id can be answered."""
    if not isinstance(message, dict) or not isinstance(message.get("method"), str):
        return None
    request_id = message.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, int | str):
        return None
    return None if isinstance(request_id, str) and _SURROGATE.search(request_id) else request_id


def refusal(body: bytes) -> Response | None:
    """The answer to a JSON-RPC body the server cannot take; None when the SDK may read it."""
    try:
        message = json.loads(body, parse_int=_read_int)
    except UnicodeDecodeError:
        return _parse_error("the body is not UTF-8")
    except RecursionError:
        return _parse_error(TOO_DEEP)
    except ValueError as exc:  # json.JSONDecodeError: the SDK's own answer, said the same way
        return _parse_error(str(exc))
    problem = _problem(message)
    if problem is None:
        return None
    why, in_params = problem
    if why == TOO_DEEP:
        return _parse_error(why)
    if in_params and (request_id := _request_id(message)) is not None:
        return _jsonrpc_error(HTTPStatus.OK, INVALID_PARAMS, f"Invalid params: {why}", request_id)
    if in_params:
        return _jsonrpc_error(
            HTTPStatus.BAD_REQUEST, INVALID_PARAMS, f"Invalid params: {why}", UNREADABLE_ID
        )
    return _jsonrpc_error(
        HTTPStatus.BAD_REQUEST, INVALID_REQUEST, f"Invalid request: {why}", UNREADABLE_ID
    )


def _is_json(scope: Scope) -> bool:
    """The request says its body is JSON, as the SDK checks it (else the SDK refuses it unread)."""
    content_type = Headers(scope=scope).get("content-type", "")
    return any(part.strip() == "application/json" for part in content_type.split(";")[0].split(","))


class ScreenBody:
    """ASGI middleware: a POSTed body the SDK cannot read safely is refused (see ``refusal``)."""

    def __init__(self, app: ASGIApp) -> None:
        """Screen the bodies posted to ``app``."""
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Read the body; answer a refusal, or pass the request on with the body as it came."""
        if scope["type"] != "http" or scope["method"] != "POST" or not _is_json(scope):
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        if (answer := refusal(body)) is not None:
            await answer(scope, receive, send)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)
