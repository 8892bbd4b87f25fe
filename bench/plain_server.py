r"""The HTTP baseline: a plain LangGraph ReAct graph behind a minimal FastAPI app.

What plain LangGraph pays for keel's todo work over HTTP: no turn lock, no auth, no message log,
no conversation rows; one graph (``bench.plain_react.build_plain_graph``) compiled per process,
every caller acting as the user ``local`` (keel without API keys does the same). Used by
``bench/http_load.py``; run it by hand from the repository root with

    PLAIN_DATABASE_URL=sqlite:////tmp/plain.db \
        python -m uvicorn bench.plain_server:app --port 8001 --workers 1

Endpoints: ``POST /conversations`` (201, a fresh id, nothing stored),
``POST /conversations/{id}/messages`` with ``{"content": ...}`` (200, ``{"reply": ...}``) and
``GET /healthz``. The checkpointer and the task store come from ``open_plain``, the one place to
adapt when keel's database layer changes.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from pydantic import BaseModel

from bench.plain_react import build_plain_graph
from keel.checkpoints.backend import SQLITE_SYNCHRONOUS, SQLITE_WAL, open_backend
from keel.tools.tasks.store import TaskStore

URL_ENV = "PLAIN_DATABASE_URL"
USER_ID = "local"


SQLITE_PRAGMAS = (SQLITE_WAL, SQLITE_SYNCHRONOUS, "PRAGMA busy_timeout=10000")


@asynccontextmanager
async def open_plain(url: str) -> AsyncIterator[tuple[BaseCheckpointSaver, TaskStore]]:
    """Open the checkpoint saver and the task store named by ``url`` (sqlite or postgresql).

    LangGraph's own saver, as a plain LangGraph application has it: on PostgreSQL
    ``AsyncPostgresSaver`` on the same kind of psycopg pool as keel's (``open_backend``); on
    SQLite ``AsyncSqliteSaver`` (aiosqlite) with WAL, ``synchronous=NORMAL`` and a busy timeout,
    the settings keel used before it ran LangGraph's ``SqliteSaver`` on its event loop (that saver
    is keel's work, not plain LangGraph's). The task rows live in keel's tables either way.
    """
    async with open_backend(url) as backend:
        if backend.url.kind != "sqlite":
            yield backend.saver, TaskStore(backend.db)
            return
        async with AsyncSqliteSaver.from_conn_string(str(backend.url.path)) as saver:
            for pragma in SQLITE_PRAGMAS:
                await saver.conn.execute(pragma)
            await saver.setup()
            yield saver, TaskStore(backend.db)


class NewMessage(BaseModel):
    """A message to the agent."""

    content: str


def create_app() -> FastAPI:
    """The app; the database is opened in the lifespan from ``PLAIN_DATABASE_URL``."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        url = os.environ.get(URL_ENV)
        if not url:
            raise RuntimeError(f"{URL_ENV} is not set (sqlite:///PATH or postgresql://...)")
        async with open_plain(url) as (saver, store):
            app.state.graph = build_plain_graph(saver, store, USER_ID)
            yield

    app = FastAPI(title="plain LangGraph baseline", lifespan=lifespan, docs_url=None)

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.post("/conversations", status_code=201)
    async def create_conversation() -> dict[str, str]:
        return {"conversation_id": str(uuid.uuid4())}

    @app.post("/conversations/{conversation_id}/messages")
    async def post_message(
        conversation_id: str, message: NewMessage, request: Request
    ) -> dict[str, Any]:
        config = {"configurable": {"thread_id": conversation_id}}
        state = await request.app.state.graph.ainvoke(
            {"messages": [HumanMessage(message.content)]}, config
        )
        return {"reply": state["messages"][-1].text}

    return app


app = create_app()
