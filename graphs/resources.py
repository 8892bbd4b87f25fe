"""The run the nodes work with: stores, chat models and settings, opened once per process.

``open_run(db, saver, settings)`` builds a ``KeelRun`` on an open database: keel's API, chat and
tests open their database and give the run to each turn's context (``KeelContext.using``).

A graph run whose context brings no run (Studio, the LangGraph SDK, ``RemoteGraph``, a notebook
that passes only plain data) runs on the process's shared run, which ``shared_run`` opens on first
use from ``Settings`` (``KEEL_DATABASE_URL`` and the rest), off the event loop wherever opening
blocks, and keeps for the life of the process (one per event loop: its connections belong to it).

``run_of(context)`` is what the graph builder calls for every node: the context resolved against
its run.
"""

from __future__ import annotations

import asyncio
import weakref
from contextlib import AsyncExitStack
from dataclasses import replace
from typing import Any

import structlog
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.config import get_config

from keel.checkpoints.backend import open_backend
from keel.checkpoints.backups import BackupStore
from keel.checkpoints.clock import Clock, utcnow
from keel.checkpoints.conversations import ConversationStore
from keel.checkpoints.database import Database
from keel.checkpoints.messages import MessageLog
from keel.checkpoints.topics import TopicStore
from keel.graphs.settings import Settings
from keel.nodes.support.context import AGENT_TOOLS, KeelContext, KeelRun
from keel.nodes.support.models import build_agent_model, build_title_model, without_done_lines
from keel.tools.store import TaskStore

log = structlog.get_logger(__name__)


def open_run(
    db: Database,
    saver: BaseCheckpointSaver | None = None,
    settings: Settings | None = None,
    clock: Clock = utcnow,
    **overrides: Any,
) -> KeelRun:
    """A run on ``db``: the stores, the models and the tunables of ``settings``.

    ``overrides`` replace any of the run's fields (a test's model, say).
    """
    settings = settings or Settings()
    openai = (settings.openai_api_key, settings.openai_model, settings.openai_base_url)
    values: dict[str, Any] = {
        "store": TaskStore(db),
        "conversations": ConversationStore(db),
        "messages": MessageLog(db, clock),
        "topics": TopicStore(db, clock),
        "backups": BackupStore(saver, db, clock=clock),
        "model": build_agent_model(AGENT_TOOLS, *openai),
        "title_model": build_title_model(*openai),
        "done_marker": settings.done_marker,
        "loop_limit": settings.loop_limit,
        "context_token_budget": settings.context_token_budget,
        "token_model": settings.token_model,
        "resume_template": settings.resume_template,
        "topic_gap_seconds": settings.topic_gap_seconds,
        "checkpoint_keep": settings.checkpoint_keep,
        "pause_at": settings.pause_at,
        "clock": clock,
    }
    run = KeelRun(**{**values, **overrides})
    if overrides.get("model") is not None:  # keel's own models take their DONE lines out
        run.model = without_done_lines(overrides["model"])
    return run


class _Shared:
    """The process's shared run on one event loop, and what keeps its database open."""

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.run: KeelRun | None = None
        self.stack = AsyncExitStack()


_shared: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Shared] = weakref.WeakKeyDictionary()


async def shared_run() -> KeelRun:
    """The process's run, opened from ``Settings`` on first use (per event loop)."""
    shared = _shared.setdefault(asyncio.get_running_loop(), _Shared())
    if shared.run is not None:
        return shared.run
    async with shared.lock:
        if shared.run is None:
            settings = await asyncio.to_thread(Settings)
            backend = await shared.stack.enter_async_context(
                open_backend(
                    settings.database_url,
                    pool_size=settings.pool_size,
                    pool_timeout=settings.db_pool_timeout_seconds,
                    offload=True,
                )
            )
            shared.run = await asyncio.to_thread(open_run, backend.db, backend.saver, settings)
            log.info("shared_run_opened", database=backend.url.kind)
    return shared.run


async def run_of(context: KeelContext | dict[str, Any] | None) -> KeelRun:
    """The run a node works with: ``context`` over its own run, or over the shared one.

    Under a LangGraph server with authentication, the acting user is the server's authenticated
    identity, whatever the context says.
    """
    if context is None:
        run = await shared_run()
    else:
        if not isinstance(context, KeelContext):
            context = KeelContext.model_validate(context)
        run = context.resolve(context.base or await shared_run())
    identity = authenticated_user()
    return replace(run, user_id=identity) if identity and identity != run.user_id else run


def authenticated_user() -> str | None:
    """The identity a LangGraph server authenticated for this run, if it did."""
    try:
        configurable = get_config().get("configurable") or {}
    except RuntimeError:  # not inside a run
        return None
    user = configurable.get("langgraph_auth_user")
    if user is None:  # no authentication configured: the server is a local development tool
        return None
    identity = getattr(user, "identity", None) or configurable.get("langgraph_auth_user_id")
    return str(identity) if identity else None
