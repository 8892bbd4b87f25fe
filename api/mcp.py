"""/mcp: the six todo tools over MCP (streamable HTTP), behind the same API keys.

The MCP tools are made from ``keel.tools.todo.TODO_TOOLS``, the list the agent binds: the same
names, descriptions and argument schemas (the tools' ``tool_call_schema``, without the injected user
and store).

Each MCP tool call runs through ``keel.tools.todo.run_tool_call`` for the user whose key came with
the request, so MCP clients get the same per-user isolation, error messages and once-only mutations
as the agent. Mounted by ``keel.api.app``; its session manager runs in the app's lifespan.
"""

from __future__ import annotations

import inspect
import json
import uuid
from collections.abc import Callable
from typing import Any

from langchain_core.tools import BaseTool
from mcp.server.fastmcp import Context, FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from keel.api.deps import user_for, user_of
from keel.api.errors import APIError, error_body
from keel.api.service import Service
from keel.tools.todo import TODO_TOOLS, run_tool_call

ServiceGetter = Callable[[], Service]


async def _call(service: Service, ctx: Context, name: str, args: dict[str, Any]) -> Any:
    request = ctx.request_context.request
    user = await user_for(service, request) if request else user_of(service, None)
    call = {"name": name, "args": args, "id": f"mcp_{uuid.uuid4().hex}", "type": "tool_call"}
    result = await run_tool_call(call, user, service.run.task_store())  # type: ignore[arg-type]
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
            annotation=field.rebuild_annotation(),
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


def build_mcp(service: ServiceGetter) -> FastMCP:
    """The MCP server with the todo tools: the agent's own list, names and descriptions."""
    server = FastMCP("keel", stateless_http=True, json_response=True, streamable_http_path="/")
    for todo_tool in TODO_TOOLS:
        server.add_tool(
            _mcp_function(todo_tool, service),
            name=todo_tool.name,
            description=todo_tool.description,
        )
    return server


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
