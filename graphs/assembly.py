"""One keel process's parts, built in one place from its settings and its tools.

``open_keel(settings, tools)`` opens the database (migrated to the newest schema), builds the
resources every turn works with (the stores, the models bound to the tools), compiles the turn
graph on the database's checkpointer and sets up ``Turns``, through which every turn runs. Every
client calls it: the HTTP service (``keel serve``: JSON, SSE, WebSocket, the page, MCP, Telegram's
webhook), ``keel chat``, ``keel telegram``, and a LangGraph server's runs (Studio, the SDK,
notebooks), whose nodes find the process's resources through
``keel.graphs.resources.shared_resources``.

The tools, when not given, are the list ``Settings.tools`` names (``KEEL_TOOLS``,
"module:attribute"; keel's todo tools by default), so a developer's tools named once reach every
client.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import inspect
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from langchain_core.tools import BaseTool

from keel.checkpoints.backend import Backend, open_backend
from keel.checkpoints.conversation_store import ConversationStore
from keel.checkpoints.database import Database
from keel.checkpoints.locks import TurnLocks
from keel.checkpoints.messages import MessageLog
from keel.checkpoints.times import FieldError, zone_named
from keel.checkpoints.topics import TopicStore
from keel.graphs.builder import KeelGraph, served
from keel.graphs.model_server import fitted
from keel.graphs.resources import open_resources
from keel.graphs.settings import Settings
from keel.graphs.turns import TurnObserver, Turns, Unobserved
from keel.nodes.run_context import KeelContext, Resources

KEEL_OWN_TOOLS = frozenset({"record_next_step", "ask_user"})
"""Tools keel binds beside the agent's own: names a developer's tools cannot take."""


class ToolsNotLoaded(ValueError):
    """``KEEL_TOOLS`` (or ``--tools``) does not name a list of LangChain tools."""


def load_tools(spec: str) -> list[BaseTool]:
    """The tools ``spec`` ("module:attribute") names: a list of tools, one tool, or a function
    that returns them.

    Raises:
        ToolsNotLoaded: what is wrong, in a sentence.
    """  # noqa: D205
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ToolsNotLoaded(f"tools {spec!r}: write them as module:attribute")
    try:
        value: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise ToolsNotLoaded(f"tools {spec!r}: cannot import {module_name} ({exc})") from exc
    try:
        value = functools.reduce(getattr, attribute.split("."), value)
    except AttributeError:
        raise ToolsNotLoaded(f"tools {spec!r}: {module_name} has no {attribute}") from None
    if inspect.isfunction(value):
        value = value()
    tools = list(value) if isinstance(value, (list, tuple)) else [value]
    wrong = [type(tool).__name__ for tool in tools if not isinstance(tool, BaseTool)]
    if not tools or wrong:
        found = ", ".join(wrong) if wrong else "an empty list"
        raise ToolsNotLoaded(f"tools {spec!r}: not a list of LangChain tools ({found})")
    names = [tool.name for tool in tools]
    if taken := sorted(KEEL_OWN_TOOLS.intersection(names)):
        raise ToolsNotLoaded(f"tools {spec!r}: keel's own tools are named {', '.join(taken)}")
    if doubled := sorted({name for name in names if names.count(name) > 1}):
        raise ToolsNotLoaded(f"tools {spec!r}: two tools are named {', '.join(doubled)}")
    return tools


@dataclass
class Keel:
    """A keel process's parts: its settings, database, resources, graph and turns."""

    settings: Settings
    backend: Backend
    resources: Resources
    """Built once: stores, the chat model (tools bound) and settings shared by every turn."""
    graph: KeelGraph
    turns: Turns
    """Every turn, from arrival to answer (lock, idempotency, recovery, the run)."""

    @property
    def db(self) -> Database:
        """Keel's tables."""
        return self.backend.db

    @property
    def conversations(self) -> ConversationStore:
        """Who owns which conversation."""
        return self.resources.conversations

    @property
    def messages(self) -> MessageLog:
        """The message log."""
        return self.resources.messages

    @property
    def topics(self) -> TopicStore:
        """The topic segments."""
        return self.resources.topics

    def turn_context(self, user_id: str) -> KeelContext:
        """The run context of one turn for ``user_id``, on the process's resources."""
        return self.resources.context(user_id)


@asynccontextmanager
async def open_keel(
    settings: Settings | None = None,
    tools: Sequence[BaseTool] | None = None,
    *,
    wait_seconds: float = 0.0,
    observer: TurnObserver | None = None,
    offload: bool = False,
) -> AsyncIterator[Keel]:
    """Open a keel process's parts; the turns under way are let finish as it closes.

    ``tools``: what the agent may call (default: those ``settings.tools`` names).
    ``wait_seconds``: how long a turn waits for a conversation another turn holds.
    ``offload``: nothing blocks the event loop (a LangGraph server's): SQLite in a worker thread,
    the tools and models loaded in one.
    """
    settings = await fitted(settings or Settings())  # a model on a local server: its settings
    try:  # KEEL_TIMEZONE's file, read once off the event loop: an unknown zone stops the start
        await asyncio.to_thread(zone_named, settings.timezone)
    except FieldError as exc:
        raise ValueError(f"KEEL_TIMEZONE: {exc.message}") from None
    if tools is None:
        tools = await _off(offload, load_tools, settings.tools)
    async with open_backend(
        settings.database_url,
        pool_size=settings.pool_size,
        pool_timeout=settings.db_pool_timeout_seconds,
        offload=offload,
        keep=settings.checkpoint_keep,
    ) as backend:
        saver = backend.saver
        resources = await _off(offload, open_resources, backend.db, saver, settings, tools=tools)
        graph = served(checkpointer=saver)
        turns = Turns(
            graph=graph,
            resources=resources,
            db=backend.db,
            locks=TurnLocks(backend.process_locks, resources.conversations),
            wait_seconds=wait_seconds,
            observer=observer or Unobserved(),
        )
        try:
            yield Keel(settings, backend, resources, graph, turns)
        finally:
            await turns.drain()


async def _off(offload: bool, fn: Any, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)``, in a worker thread when ``offload``."""
    if offload:
        return await asyncio.to_thread(functools.partial(fn, *args, **kwargs))
    return fn(*args, **kwargs)
