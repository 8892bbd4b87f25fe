"""/mcp: the todo tools over MCP (streamable HTTP), behind the same API keys.

The MCP tools are made from the list the agent binds (``KEEL_TOOLS``, keel's todo tools by
default: ``keel.graphs.assembly.load_tools``): the same names, descriptions and argument schemas
(the tools' ``tool_call_schema``, without the injected user and store).

Each MCP tool call runs through ``keel.tools.calls.run_tool_call`` for the user whose key came with
the request, so MCP clients get the same per-user isolation, error messages and once-only mutations
as the agent. Mounted by ``keel.api.app``; its session manager runs in the app's lifespan.

Errors are answered the way MCP clients expect them (the specification's streamable HTTP
transport), never with a 500 for bad input nor with the database's own text:

- A request is checked like every other (``keel.api.request_guard``: the host when no keys are
  set, the key, the body's size) before the SDK sees it; a body the server cannot take is then
  refused before the SDK reads it (``keel.api.mcp_screen``).
- The server is stateless and answers in JSON: it has no stream of its own to offer, so a GET
  (which would open one and hold its connection for good) is answered 405, as the specification
  allows.
- A tool call during a database outage (``keel.checkpoints.trouble.trouble_of``) is answered with a
  JSON-RPC error, code ``DATABASE_UNAVAILABLE``, message ``DATABASE_DOWN``, data
  ``{"code": "database_unavailable", "retry_after": 1}``: the specification has a request the
  server took answered with a JSON-RPC response, not a 503 (an SDK client raises it for that call
  alone and keeps its session, where an HTTP error status ends its whole connection). A
  tool that fails for any other reason is a -32603 internal error, logged with its traceback.
"""

from __future__ import annotations

import inspect
import json
import uuid
from collections.abc import Awaitable, Callable, Sequence
from contextvars import ContextVar
from typing import Annotated, Any

import structlog
from langchain_core.messages import ToolCall
from langchain_core.tools import BaseTool
from mcp.server.fastmcp import Context, FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import McpError
from mcp.types import (
    INTERNAL_ERROR,
    CallToolRequest,
    ErrorData,
)
from pydantic import Field
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from keel.api.deps import user_for, user_of
from keel.api.errors import RETRY_AFTER_SECONDS, error_body
from keel.api.mcp_screen import ScreenBody
from keel.api.service import Service
from keel.checkpoints.trouble import trouble_of
from keel.tools.calls import run_tool_call

ServiceGetter = Callable[[], Service]
log = structlog.get_logger(__name__)

DATABASE_UNAVAILABLE = -32053
"""JSON-RPC code of a call refused while the database is away (the implementation-defined
server-error range; the SDKs' own codes there are -32000, -32001 and -32042)."""
DATABASE_DOWN = "the database is unavailable; retry soon"
INTERNAL = "an internal error occurred"
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
    call = ToolCall(name=name, args=args, id=f"mcp_{uuid.uuid4().hex}", type="tool_call")
    resources = service.resources
    store = resources.store.in_zone(service.settings.timezone)  # dates read in the server's zone
    try:
        result = await run_tool_call(call, user, store, tools=resources.tools)
    except Exception as exc:
        if trouble_of(exc):  # the database's own text stays here, like the API's 503
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
        """The SDK's app behind ``ScreenBody``."""
        app = super().streamable_http_app()
        app.add_middleware(ScreenBody)
        return app


def build_mcp(service: ServiceGetter, tools: Sequence[BaseTool], *, body_limit: int) -> FastMCP:
    """The MCP server with ``tools``: the agent's own list, names and descriptions.

    ``body_limit`` is the server's (``KEEL_MAX_BODY_BYTES``), which keel checks before the SDK;
    keel checks the host too (``keel.api.request_guard``), so the SDK's own check is off.
    """
    server = KeelMCP(
        "keel",
        stateless_http=True,
        json_response=True,
        streamable_http_path="/",
        max_request_body_size=body_limit,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    for todo_tool in tools:
        server.add_tool(
            _mcp_function(todo_tool, service),
            name=todo_tool.name,
            description=todo_tool.description,
        )
    _answer_failures_as_errors(server)
    return server


NO_STREAM = "this MCP server is stateless and opens no stream: POST JSON-RPC requests"


class NoStream:
    """ASGI middleware: a GET to /mcp, which asks for a stream the server has none of, gets 405."""

    def __init__(self, app: ASGIApp) -> None:
        """Serve ``app`` but for its stream."""
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer a GET with 405; pass anything else on."""
        if scope["type"] == "http" and scope["method"] in ("GET", "HEAD"):
            body = error_body("method_not_allowed", NO_STREAM)
            answer = JSONResponse(body, 405, headers={"Allow": "POST"})
            await answer(scope, receive, send)
            return
        await self.app(scope, receive, send)
