"""The FastAPI application: ``create_app()`` is what ``keel serve`` (uvicorn) runs.

The graph is compiled inside the lifespan with the checkpointer from ``open_checkpointer``. The
interactive API page is at /docs (Swagger UI) and /redoc, both served from the installed
``fastapi-offline`` package, so they work with no network; the schema is at /openapi.json. The
todo tools are served over MCP at /mcp/. The chat page (``keel.api.web``) is at /, its files under
/web/: a client of the public API like any other.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi_offline import FastAPIOffline
from langchain_core.tools import BaseTool

from keel.api.errors import install_error_handlers
from keel.api.logs import configure_logging
from keel.api.mcp import RequireKey, build_mcp
from keel.api.routers import conversations, health, metrics, tasks, web, ws
from keel.api.schemas import STREAM_PARTS
from keel.api.service import open_service
from keel.graphs.settings import Settings
from keel.tools.todo import TODO_TOOLS


def with_stream_parts(app: FastAPI) -> dict[str, Any]:
    """The app's OpenAPI schema, with the schemas of the streamed events among its components."""
    if app.openapi_schema is None:
        schema = FastAPI.openapi(app)
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        for name, part in STREAM_PARTS.items():
            components.setdefault(name, part)
    return app.openapi_schema or {}


def create_app(settings: Settings | None = None, tools: Sequence[BaseTool] = TODO_TOOLS) -> FastAPI:
    """Build the app (settings from the environment unless given) around ``tools``."""
    settings = (settings or Settings()).for_serving()
    configure_logging()

    mcp = build_mcp(lambda: app.state.service, tools)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with open_service(settings, tools) as service, mcp.session_manager.run():
            app.state.service = service
            yield

    app = FastAPIOffline(
        title="keel",
        version="0.1.0",
        description="A conversational task agent on LangGraph: a todo assistant with memory.",
        lifespan=lifespan,
    )
    install_error_handlers(app)
    routers = (conversations, tasks, ws, health, metrics, web)
    for router in (r.router for r in routers):
        app.include_router(router)
    app.openapi = lambda: with_stream_parts(app)  # type: ignore[method-assign]
    app.mount("/web", web.assets(), name="web")
    app.mount("/mcp", RequireKey(mcp.streamable_http_app(), lambda: app.state.service))
    return app
