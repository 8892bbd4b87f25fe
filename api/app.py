"""The FastAPI application: ``create_app()`` is what ``keel serve`` (uvicorn) runs.

The graph is compiled inside the lifespan with the checkpointer of ``open_backend``. The
interactive API page is at /docs (Swagger UI) and /redoc, both served from the installed
``fastapi-offline`` package, so they work with no network; the schema is at /openapi.json. The
todo tools are served over MCP at /mcp/; Telegram's updates, in webhook mode, at /telegram/webhook
(``keel.api.telegram.webhook``). The chat page (``keel.api.web``) is at /, its files under
/web/: a client of the public API like any other.

Every request passes ``keel.api.request_guard`` (host, key, body size) before any route reads it,
and every answer gets ``keel.api.security_headers``'s headers, the app's own error pages included.
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
from keel.api.mcp import NoStream, build_mcp
from keel.api.message_schemas import STREAM_PARTS
from keel.api.prometheus import retire_dead_workers
from keel.api.request_guard import RequestGuard
from keel.api.routers import conversations, health, history, metrics, tasks, web, ws
from keel.api.security_headers import SecurityHeaders
from keel.api.service import open_service
from keel.api.telegram import webhook as telegram_webhook
from keel.graphs.assembly import load_tools
from keel.graphs.settings import Settings

REFERENCE_PAGES = ("/docs", "/redoc")
"""Swagger UI and ReDoc, from ``fastapi-offline``."""


def with_stream_parts(app: FastAPI) -> dict[str, Any]:
    """The app's OpenAPI schema, with the schemas of the streamed events among its components."""
    if app.openapi_schema is None:
        schema = FastAPI.openapi(app)
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        for name, part in STREAM_PARTS.items():
            components.setdefault(name, part)
    return app.openapi_schema or {}


def create_app(
    settings: Settings | None = None, tools: Sequence[BaseTool] | None = None
) -> FastAPI:
    """Build the app (settings from the environment unless given) around ``tools``.

    ``tools`` not given: the list the settings name (``KEEL_TOOLS``; keel's todo tools by
    default). Every client the app serves (the API, the page, MCP, Telegram's webhook) gets them.
    """
    settings = (settings or Settings()).for_serving()
    configure_logging()
    tools = list(tools) if tools is not None else load_tools(settings.tools)

    mcp = build_mcp(lambda: app.state.service, tools, body_limit=settings.body_limit)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if settings.metrics_dir:  # a worker of ``keel serve --workers N`` starts
            retire_dead_workers(settings.metrics_dir)
        async with (
            open_service(settings, tools) as service,
            telegram_webhook.opened_webhook(settings, service.turns) as telegram,
            mcp.session_manager.run(),
        ):
            app.state.service = service
            app.state.telegram = telegram
            if telegram is not None and service.delivery is not None:  # its chats told too
                service.delivery.channels.append(telegram.remind)
                service.delivery.telegram = True
            yield

    app = FastAPIOffline(
        title="keel",
        version="0.1.0",
        description="A conversational task agent on LangGraph: a todo assistant with memory.",
        lifespan=lifespan,
        docs_url=REFERENCE_PAGES[0],
        redoc_url=REFERENCE_PAGES[1],
    )
    install_error_handlers(app)
    routers = (conversations, history, tasks, ws, health, metrics, web, telegram_webhook)
    for router in (r.router for r in routers):
        app.include_router(router)
    app.openapi = lambda: with_stream_parts(app)  # type: ignore[method-assign]
    app.mount("/web", web.assets(), name="web")
    app.mount("/mcp", NoStream(mcp.streamable_http_app()))
    app.add_middleware(RequestGuard, settings=settings, service=lambda: app.state.service)
    with_headers(app)
    return app


def with_headers(app: FastAPI) -> None:
    """Put ``SecurityHeaders`` around all of ``app``, its last-resort error answers included."""
    pages = [*REFERENCE_PAGES, app.swagger_ui_oauth2_redirect_url or ""]
    build = app.build_middleware_stack
    app.build_middleware_stack = lambda: SecurityHeaders(build(), pages)  # type: ignore[method-assign]
