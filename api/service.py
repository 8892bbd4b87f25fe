"""What the server holds for its lifetime: the database, the compiled graph, the turn locks.

``open_service(settings)`` opens them in the app's lifespan; routers reach them through
``keel.api.deps``. ``turn_context`` builds a turn's run context for a user on the service's
resources (the stores, models and tools every turn shares, one clock for them all).
Turns run in tasks the service owns (``track``), so a client that goes away never cuts a turn short
or strands its lock; closing the service waits for them.
"""

from __future__ import annotations

import asyncio
from collections import Counter, OrderedDict
from collections.abc import AsyncIterator, Coroutine, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from langchain_core.tools import BaseTool

from keel.checkpoints.backend import Backend, open_backend
from keel.checkpoints.backups import BackupStore
from keel.checkpoints.conversations import ConversationStore
from keel.checkpoints.database import Database
from keel.checkpoints.locks import TurnLocks
from keel.checkpoints.messages import MessageLog
from keel.checkpoints.newest import NewestKept
from keel.checkpoints.requests import RequestStore
from keel.checkpoints.retention import Retention, latest_checkpoint_id
from keel.checkpoints.topics import TopicStore
from keel.graphs.builder import KeelGraph, build_graph
from keel.graphs.resources import open_resources
from keel.graphs.result import TurnResult
from keel.graphs.runner import TurnStart
from keel.graphs.settings import Settings
from keel.nodes.support.context import KeelContext, Resources
from keel.tools.todo import TODO_TOOLS

T = TypeVar("T")
KNOWN_CONVERSATIONS = 10_000
SHUTDOWN_GRACE_SECONDS = 30


@dataclass
class Service:
    """The long-lived parts of a running server."""

    settings: Settings
    backend: Backend
    graph: KeelGraph
    requests: RequestStore
    locks: TurnLocks
    retention: Retention
    resources: Resources
    """Built once: stores, the chat model (tools bound) and settings shared by every turn."""
    tasks: set[asyncio.Task[Any]] = field(default_factory=set)
    known: OrderedDict[str, str | None] = field(default_factory=OrderedDict)
    """Per conversation: the checkpoint this process's last turn ended on (not cut off)."""
    sockets: Counter[str] = field(default_factory=Counter)
    """Open WebSockets per user in this process."""
    stops: dict[str, asyncio.Event] = field(default_factory=dict)
    """The turns running in this process, by conversation: setting the event stops the turn."""

    async def turn_start(self, conversation_id: str) -> TurnStart | None:
        """Where the conversation stands, if nothing changed it since this process's last turn.

        One index lookup (the newest checkpoint's id) instead of reading and decoding the state.
        """
        if conversation_id not in self.known:
            return None
        latest = await latest_checkpoint_id(self.backend.saver, self.db, conversation_id)
        if latest != self.known[conversation_id]:
            return None
        return TurnStart(cut_off=False, checkpoint_id=latest)

    async def remember(self, conversation_id: str, result: TurnResult | None) -> None:
        """Note where a turn left the conversation (``None``: forget it, the turn failed)."""
        self.known.pop(conversation_id, None)
        if result is None:
            return
        saver = self.backend.saver
        latest = saver.newest_kept(conversation_id) if isinstance(saver, NewestKept) else None
        if latest is None:  # the turn wrote nothing (or not through keel's saver): look it up
            latest = await latest_checkpoint_id(saver, self.db, conversation_id)
        self.known[conversation_id] = latest
        if len(self.known) > KNOWN_CONVERSATIONS:
            self.known.popitem(last=False)

    @property
    def db(self) -> Database:
        """Keel's tables."""
        return self.backend.db

    @property
    def conversations(self) -> ConversationStore:
        """Who owns which conversation (one owner cache for the API and the graph)."""
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
        """The run context of one turn for ``user_id``, on the service's resources."""
        return self.resources.context(user_id)

    def pool_stats(self) -> dict[str, int]:
        """The PostgreSQL pool's counters (connections, waiting requests); empty on SQLite."""
        pool = getattr(self.db, "pool", None)
        return pool.get_stats() if pool is not None else {}

    async def delete_conversation(self, conversation_id: str) -> None:
        """Delete a conversation: its checkpoints and backups, log, topics and the record itself.

        The caller holds its turn lock. The user's tasks stay.
        """
        saver = self.backend.saver
        for backup_id in await BackupStore(saver, self.db).list(conversation_id):
            await saver.adelete_thread(backup_id)
        await saver.adelete_thread(conversation_id)
        await self.conversations.delete(conversation_id)
        self.known.pop(conversation_id, None)

    def track(self, work: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        """Run ``work`` in a task of the service's own, which outlives the request."""
        task = asyncio.create_task(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    async def drain(self) -> None:
        """Let the turns under way finish (bounded), then the background prunes."""
        if self.tasks:
            await asyncio.wait(self.tasks, timeout=SHUTDOWN_GRACE_SECONDS)
        await self.retention.aclose()


@asynccontextmanager
async def open_service(
    settings: Settings, tools: Sequence[BaseTool] = TODO_TOOLS
) -> AsyncIterator[Service]:
    """Open the database (one pool) and compile the graph; ``tools``: what the agent may call."""
    async with AsyncExitStack() as stack:
        backend = await stack.enter_async_context(
            open_backend(
                settings.database_url,
                pool_size=settings.pool_size,
                pool_timeout=settings.db_pool_timeout_seconds,
            )
        )
        db, saver = backend.db, backend.saver
        resources = open_resources(db, saver, settings, tools=tools)
        service = Service(
            settings=settings,
            backend=backend,
            graph=build_graph(checkpointer=saver),
            requests=RequestStore(db),
            locks=TurnLocks(backend.process_locks),
            retention=Retention(saver, settings.checkpoint_keep),
            resources=resources,
        )
        try:
            yield service
        finally:
            await service.drain()
