"""/mcp: the todo tools over MCP (streamable HTTP), behind the same API keys.

The MCP tools are made from the list the agent binds (``keel.tools.todo.TODO_TOOLS``): the same
names, descriptions and argument schemas (the tools' ``tool_call_schema``, without the injected user
and store).

Each MCP tool call runs through ``keel.tools.calls.run_tool_call`` for the user whose key came with
the request, so MCP clients get the same per-user isolation, error messages and once-only mutations
as the agent. Mounted by ``keel.api.app``; its session manager runs in the app's lifespan.

Errors are answered the way MCP clients expect them (the specification's streamable HTTP
transport), never with a 500 for bad input nor with the database's own text:

- A body the server cannot take is refused before the SDK reads it (``ScreenBody``; the SDK
  would answer several such bodies with a 500 and a traceback in the log): HTTP 400 with a
  JSON-RPC error, -32700 for a body that is not JSON keel reads (not UTF-8, a syntax error,
  nested more than ``MAX_DEPTH`` deep), -32602 (-32600 outside ``params``) for JSON holding what
  no tool can take (a lone surrogate, an integer of more than ``MAX_DIGITS`` digits). That is the
  SDK's own answer to a body it cannot parse or validate, so every such body gets one shape.
  When the problem is in the ``params`` of a request whose id can be read, the answer is that
  request's JSON-RPC error instead (HTTP 200 and its id), as the SDK answers other invalid
  params: an SDK client raises it for that call alone (``McpError``) and keeps its session,
  where an HTTP error status ends the Python SDK client's whole connection.
- A tool call during a database outage (``keel.api.errors.is_database_down``) is answered with a
  JSON-RPC error, code ``DATABASE_UNAVAILABLE``, message ``DATABASE_DOWN``, data
  ``{"code": "database_unavailable", "retry_after": 1}``: the specification has a request the
  server took answered with a JSON-RPC response, and for the same reason as above, not a 503. A
  tool that fails for any other reason is a -32603 internal error, logged with its traceback.
"""

from __future__ import annotations

import inspect
import json
import re
import uuid
from collections.abc import Awaitable, Callable, Sequence
from contextvars import ContextVar
from http import HTTPStatus
from typing import Annotated, Any

import structlog
from langchain_core.tools import BaseTool
from mcp.server.fastmcp import Context, FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from mcp.server.transport_security import RequestBodyLimitMiddleware
from mcp.shared.exceptions import McpError
from mcp.types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    CallToolRequest,
    ErrorData,
    JSONRPCError,
    RequestId,
)
from pydantic import Field
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from keel.api.deps import user_for, user_of
from keel.api.errors import RETRY_AFTER_SECONDS, APIError, error_body, is_database_down
from keel.api.service import Service
from keel.tools.calls import run_tool_call
from keel.tools.todo import TODO_TOOLS

ServiceGetter = Callable[[], Service]
log = structlog.get_logger(__name__)

MAX_DEPTH = 64
"""Deepest nesting of arrays and objects read; MCP messages nest a few levels."""
MAX_DIGITS = 4300
"""Longest integer read (CPython's own limit for reading one): every number a tool can use."""
DATABASE_UNAVAILABLE = -32053
"""JSON-RPC code of a call refused while the database is away (the implementation-defined
server-error range; the SDKs' own codes there are -32000, -32001 and -32042)."""
DATABASE_DOWN = "the database is unavailable; retry soon"
INTERNAL = "an internal error occurred"
UNREADABLE_ID = "server-error"
"""The id of an error that answers no request, as the SDK sends it (MCP's schema has no null)."""
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_failures: ContextVar[list[ErrorData] | None] = ContextVar("keel_mcp_failures", default=None)
"""Where a tool call notes why it failed, for ``_answer_failures_as_errors`` to answer."""


def _failed(error: ErrorData) -> ToolError:
    """Note ``error`` for the call's JSON-RPC answer; the ToolError says the same to the SDK."""
    if (failures := _failures.get()) is not None:
        failures.append(error)
    return ToolError(error.message)


async def _call(service: Service, ctx: Context, name: str, args: dict[str, Any]) -> Any:
    request = ctx.request_context.request
    user = await user_for(service, request) if request else user_of(service, None)
    call = {"name": name, "args": args, "id": f"mcp_{uuid.uuid4().hex}", "type": "tool_call"}
    try:
        resources = service.resources
        result = await run_tool_call(call, user, resources.store, tools=resources.tools)  # type: ignore[arg-type]
    except Exception as exc:
        if is_database_down(exc):  # the database's own text stays here, like the API's 503
            log.warning("database_unavailable", error=type(exc).__name__, tool=name)
            data = {"code": "database_unavailable", "retry_after": RETRY_AFTER_SECONDS}
            error = ErrorData(code=DATABASE_UNAVAILABLE, message=DATABASE_DOWN, data=data)
        else:
            log.exception("mcp_tool_failed", error=type(exc).__name__, tool=name)
            error = ErrorData(code=INTERNAL_ERROR, message=INTERNAL)
        raise _failed(error) from None
    if result.status == "error":
        raise ToolError(str(result.content))
    return json.loads(str(result.content))


def _mcp_function(todo_tool: BaseTool, service: ServiceGetter) -> Callable[..., Any]:
    """A function FastMCP can serve for ``todo_tool``: its signature is the tool's call schema."""
    fields = todo_tool.tool_call_schema.model_fields  # type: ignore[union-attr]
    parameters = [
        inspect.Parameter(
            name,
            inspect.Parameter.KEYWORD_ONLY,
            # the field's constraints, and what the schema says of it beyond its type
            annotation=Annotated[
                field.rebuild_annotation(),
                Field(description=field.description, title=field.title, examples=field.examples),
            ],
            default=inspect.Parameter.empty if field.is_required() else field.default,
        )
        for name, field in fields.items()
    ]
    parameters.append(inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context))

    async def call(ctx: Context, **args: Any) -> Any:
        return await _call(service(), ctx, todo_tool.name, args)

    call.__name__ = todo_tool.name
    call.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    return call


def _answer_failures_as_errors(server: FastMCP) -> None:
    """Answer a tool call that failed (not a tool's own error) with the JSON-RPC error noted.

    The SDK turns every exception of a tool into an ``isError`` result holding its text; its
    request loop answers an ``McpError`` raised by the request's handler as a JSON-RPC error.
    """
    lowlevel = server._mcp_server  # the SDK's request handlers
    run_tool: Callable[[Any], Awaitable[Any]] = lowlevel.request_handlers[CallToolRequest]

    async def call_tool(request: Any) -> Any:
        failures: list[ErrorData] = []
        token = _failures.set(failures)
        try:
            result = await run_tool(request)
        finally:
            _failures.reset(token)
        if failures:
            raise McpError(failures[0])
        return result

    lowlevel.request_handlers[CallToolRequest] = call_tool


class KeelMCP(FastMCP):
    """FastMCP whose HTTP app refuses a body it cannot take with a JSON-RPC error (no 500)."""

    def streamable_http_app(self) -> Starlette:
        """The SDK's app behind ``ScreenBody``, itself behind the SDK's body size limit."""
        app = super().streamable_http_app()
        app.add_middleware(ScreenBody)  # the later one added runs first
        app.add_middleware(
            RequestBodyLimitMiddleware, max_body_size=self.settings.max_request_body_size
        )
        return app


def build_mcp(service: ServiceGetter, tools: Sequence[BaseTool] = TODO_TOOLS) -> FastMCP:
    """The MCP server with ``tools``: the agent's own list, names and descriptions."""
    server = KeelMCP("keel", stateless_http=True, json_response=True, streamable_http_path="/")
    for todo_tool in tools:
        server.add_tool(
            _mcp_function(todo_tool, service),
            name=todo_tool.name,
            description=todo_tool.description,
        )
    _answer_failures_as_errors(server)
    return server


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


class RequireKey:
    """ASGI middleware: a request to /mcp without a valid key gets the API's 401."""

    def __init__(self, app: ASGIApp, service: ServiceGetter) -> None:
        """Guard ``app``."""
        self.app, self.service = app, service

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check the key, then pass the request on."""
        if scope["type"] == "http":
            try:
                await user_for(self.service(), Request(scope))
            except APIError as exc:
                await JSONResponse(error_body(exc.code, exc.message), exc.status)(
                    scope, receive, send
                )
                return
        await self.app(scope, receive, send)
