"""The resources the nodes work with: stores, chat models and tools, opened once per process.

``open_resources(db, saver, settings, tools=...)`` builds ``Resources`` on an open database:
keel's API, chat and tests open their database and give the resources to each turn's context
(``resources.context(user_id)``). ``tools`` is named where a process is assembled (the app, the
chat, the shared resources below) and read from the resources everywhere else.

A graph run whose context brings none (Studio, the LangGraph SDK, ``RemoteGraph``, a notebook that
passes only plain data) runs on the process's shared resources, which ``shared_resources`` opens
on first use from ``Settings`` (``KEEL_DATABASE_URL`` and the rest), off the event loop wherever
opening blocks (``keel.graphs.assembly.open_keel``, as every client), and keeps for the life of
the process (one per event loop: its connections belong to it).

``prepared(context)`` is what the graph builder calls for every node: the context with its
resources, and the acting user a LangGraph server authenticated.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Sequence
from contextlib import AsyncExitStack
from typing import Any

import structlog
from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.config import get_config

from keel.checkpoints.backups import BackupStore
from keel.checkpoints.clock import Clock, utcnow
from keel.checkpoints.conversation_store import ConversationStore
from keel.checkpoints.database import Database
from keel.checkpoints.messages import MessageLog
from keel.checkpoints.reminders import ReminderStore
from keel.checkpoints.times import zone_named, zone_ready
from keel.checkpoints.topics import TopicStore
from keel.graphs.settings import Settings
from keel.nodes.context.embeddings import load_embedder
from keel.nodes.models.chat import (
    build_agent_model,
    build_fallback_model,
    build_title_model,
    system_prompt,
    without_done_lines,
)
from keel.nodes.models.declared import Declaring
from keel.nodes.models.tokens import load_encoding
from keel.nodes.run_context import TUNABLES, KeelContext, Resources, Tunables
from keel.nodes.support.planner import planning
from keel.tools.ask_user import ask_user
from keel.tools.next_step import record_next_step
from keel.tools.tasks.store import TaskStore
from keel.tools.understanding.nlu import reader_for

log = structlog.get_logger(__name__)


def open_resources(
    db: Database,
    saver: BaseCheckpointSaver | None = None,
    settings: Settings | None = None,
    clock: Clock = utcnow,
    *,
    tools: Sequence[BaseTool],
    **overrides: Any,
) -> Resources:
    """The resources on ``db``: the stores, the models bound to ``tools``, and ``settings``.

    ``overrides`` replace any of the fields of ``Resources`` (a test's model, say).
    """
    settings = settings or Settings()
    openai = (settings.openai_api_key, settings.openai_model, settings.openai_base_url)
    bound = [*tools, record_next_step, ask_user]
    side_model = build_title_model(*openai, settings.model_limits)
    values: dict[str, Any] = {
        "store": TaskStore(db, clock, reminders_max=settings.reminders_per_user),
        "conversations": ConversationStore(db, clock, saver),
        "messages": MessageLog(db, clock),
        "topics": TopicStore(db, clock),
        "reminders": ReminderStore(db, clock),
        "backups": BackupStore(saver, db, clock=clock),
        "model": build_agent_model(bound, *openai, settings.model_limits),
        "fallback_model": build_fallback_model(bound),
        "title_model": side_model,
        "plan_model": planning(side_model, settings.plan_method),
        "plan_method": settings.plan_method,
        "tools": list(tools),
        "prompt": system_prompt(tools, settings.done_rule),
        "declaring": (
            Declaring(bound, settings.done_rule)
            if settings.tool_schemas == "lean"
            and settings.openai_api_key
            and overrides.get("model") is None  # keel's own OpenAI model takes them
            else None
        ),
        "settings": Tunables.model_validate(settings.model_dump(include=set(TUNABLES))),
        "token_model": settings.token_model,
        "embedder": load_embedder(),
        "shift_threshold": settings.topic_shift_threshold,
        "return_threshold": settings.topic_return_threshold,
        "pause_at": settings.pause_at,
        "clock": clock,
    }
    load_encoding(settings.token_model, settings.tiktoken_cache_dir)  # it reads files: here
    reader_for(tools)  # the offline understanding loaded (trained, for new tools) here too
    resources = Resources(**{**values, **overrides})
    if overrides.get("model") is not None:  # keel's own models take their DONE lines out
        resources.model = without_done_lines(overrides["model"])
    return resources


class _Shared:
    """The process's shared resources on one event loop, and what keeps their database open."""

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.resources: Resources | None = None
        self.stack = AsyncExitStack()


_shared: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Shared] = weakref.WeakKeyDictionary()


async def shared_resources() -> Resources:
    """The process's resources, opened from ``Settings`` on first use (per event loop)."""
    from keel.graphs.assembly import open_keel  # it compiles the graph, whose nodes import this

    shared = _shared.setdefault(asyncio.get_running_loop(), _Shared())
    if shared.resources is not None:
        return shared.resources
    async with shared.lock:
        if shared.resources is None:
            settings = await asyncio.to_thread(Settings)
            keel = await shared.stack.enter_async_context(open_keel(settings, offload=True))
            shared.resources = keel.resources
            log.info("shared_resources_opened", database=keel.backend.url.kind)
    return shared.resources


async def close_shared_resources() -> None:
    """Close this event loop's shared resources (at a notebook's or a test's end)."""
    shared = _shared.pop(asyncio.get_running_loop(), None)
    if shared is not None:
        await shared.stack.aclose()


async def prepared(context: KeelContext | dict[str, Any] | None) -> KeelContext:
    """The context a node reads: ``context`` on its resources, or on the shared ones.

    Under a LangGraph server with authentication, the acting user is the server's authenticated
    identity, whatever the context says.
    """
    if not isinstance(context, KeelContext):
        context = KeelContext.model_validate(context or {})
    if not context.prepared:
        context = context.using(await shared_resources())
    if not zone_ready(context.timezone):  # a zone's file is read once, never in the event loop
        await asyncio.to_thread(zone_named, context.timezone)
    identity = authenticated_user()
    if identity and identity != context.user_id:
        context = context.model_copy(update={"user_id": identity})
    return context


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
