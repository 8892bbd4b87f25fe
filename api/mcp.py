"""/mcp: the six todo tools over MCP (streamable HTTP), behind the same API keys.

Each MCP tool call runs through ``tools.todo.run_tool_call`` for the user whose key came with the
request, so MCP clients get the same per-user isolation, error messages and once-only mutations
as the agent. Mounted by ``api.app``; its session manager runs in the app's lifespan.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

from mcp.server.fastmcp import Context, FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from api.deps import user_for
from api.errors import APIError, error_body
from api.service import Service
from tools.todo import TaskId, run_tool_call

ServiceGetter = Callable[[], Service]


async def _call(service: Service, ctx: Context, name: str, args: dict[str, Any]) -> Any:
    request = ctx.request_context.request
    user = user_for(service, request.headers.get("authorization") if request else None)
    call = {"name": name, "args": args, "id": f"mcp_{uuid.uuid4().hex}", "type": "tool_call"}
    result = await run_tool_call(call, user, service.run.task_store())  # type: ignore[arg-type]
    if result.status == "error":
        raise ToolError(str(result.content))
    return json.loads(str(result.content))


def build_mcp(service: ServiceGetter) -> FastMCP:
    """The MCP server with the todo tools."""
    server = FastMCP("keel", stateless_http=True, json_response=True, streamable_http_path="/")

    @server.tool(description="Create a new task with the given title.")
    async def create_todo_task(title: str, ctx: Context) -> Any:
        return await _call(service(), ctx, "create_todo_task", {"title": title})

    @server.tool(description="Show the details of one task by its id.")
    async def get_todo_task(task_id: TaskId, ctx: Context) -> Any:
        return await _call(service(), ctx, "get_todo_task", {"task_id": task_id})

    @server.tool(description="List all of the user's tasks.")
    async def list_todo_tasks(ctx: Context) -> Any:
        return await _call(service(), ctx, "list_todo_tasks", {})

    @server.tool(description="Rename a task.")
    async def update_todo_task(task_id: TaskId, title: str, ctx: Context) -> Any:
        return await _call(service(), ctx, "update_todo_task", {"task_id": task_id, "title": title})

    @server.tool(description="Mark a task as completed.")
    async def complete_todo_task(task_id: TaskId, ctx: Context) -> Any:
        return await _call(service(), ctx, "complete_todo_task", {"task_id": task_id})

    @server.tool(description="Delete a task.")
    async def delete_todo_task(task_id: TaskId, ctx: Context) -> Any:
        return await _call(service(), ctx, "delete_todo_task", {"task_id": task_id})

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
                user_for(self.service(), Request(scope).headers.get("authorization"))
            except APIError as exc:
                await JSONResponse(error_body(exc.code, exc.message), exc.status)(
                    scope, receive, send
                )
                return
        await self.app(scope, receive, send)
