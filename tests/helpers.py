"""Helpers several test modules share: opening keel's tables, reading the schema's revision."""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import sqlalchemy as sa

from keel.checkpoints.backend import open_backend
from keel.checkpoints.database import Database
from keel.checkpoints.migrate import revision_sync
from keel.nodes.models.markers import DEFAULT_DONE_MARKER, lines
from keel.nodes.state.machine import AgentState
from keel.nodes.state.schema import KeelState


@asynccontextmanager
async def open_database(url: str) -> AsyncIterator[Database]:
    """Only keel's tables of ``url`` (the checkpointer opened alongside goes unused)."""
    async with open_backend(url) as backend:
        yield backend.db


async def current_revision(engine: sa.Engine) -> str | None:
    """The revision the database is at, read in a worker thread."""
    return await asyncio.to_thread(revision_sync, engine)


def strip_done(text: str, marker: str = DEFAULT_DONE_MARKER) -> str:
    """``text`` without the lines that match the DONE marker, read as a whole."""
    pattern = re.compile(marker, re.IGNORECASE)
    kept = [line for line in lines(text) if not pattern.search(line)]
    return "\n".join(kept).strip()


def is_complete(state: KeelState) -> bool:
    """The turn ended in RESPONSE on a DONE marker with nothing open."""
    return state.get("agent_state") == AgentState.RESPONSE and bool(state.get("complete"))


def is_processing(state: KeelState) -> bool:
    """The state machine is in ASSISTANT or TOOL_EXECUTION."""
    return state.get("agent_state") in (AgentState.ASSISTANT, AgentState.TOOL_EXECUTION)


async def invoke(store: Any, user: str, name: str, **args: Any) -> tuple[str, Any]:
    """A todo tool called as the agent calls it: its status, and its result (or error text)."""
    from keel.tools.calls import run_tool_call
    from keel.tools.tasks.todo import TODO_TOOLS

    call = {"name": name, "args": args, "id": f"call_{uuid.uuid4().hex}", "type": "tool_call"}
    msg = await run_tool_call(call, user, store, tools=TODO_TOOLS)
    return msg.status, (json.loads(msg.content) if msg.status != "error" else msg.content)
