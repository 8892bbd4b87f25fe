"""What the server holds for its lifetime: the database, the compiled graph, its turns.

``open_service(settings)`` opens them in the app's lifespan; routers reach them through
``keel.api.deps``. Every turn, and everything that must not run beside one (a delete), goes
through ``service.turns`` (``keel.graphs.turns``): the routers only translate HTTP and WebSocket to
it. ``turn_context`` builds a turn's run context for a user on the service's resources.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field

from langchain_core.tools import BaseTool

from keel.api import metrics
from keel.api.socket_counts import SocketCounts
from keel.checkpoints.backend import Backend, open_backend
from keel.checkpoints.conversations import ConversationStore
from keel.checkpoints.database import Database
from keel.checkpoints.locks import TurnLocks
from keel.checkpoints.messages import MessageLog
from keel.checkpoints.retention import Retention
from keel.checkpoints.topics import TopicStore
from keel.graphs.builder import KeelGraph, build_graph
from keel.graphs.resources import open_resources
from keel.graphs.result import TurnResult
from keel.graphs.settings import Settings
from keel.graphs.turns import Turns
from keel.nodes.run_context import KeelContext, Resources


@dataclass
class Service:
    """The long-lived parts of a running server."""

    settings: Settings
    backend: Backend
    graph: KeelGraph
    resources: Resources
    """Built once: stores, the chat model (tools bound) and settings shared by every turn."""
    turns: Turns
    """Every turn, from arrival to answer (lock, idempotency, recovery, the run, pruning)."""
    sockets: SocketCounts = field(default_factory=lambda: SocketCounts(None))
    """Open WebSockets per user on this server (its workers together)."""

    @property
    def db(self) -> Database:
        """Keel's tables."""
        return self.backend.db

    @property
    def retention(self) -> Retention:
        """The pruning of old checkpoints, in the background."""
        assert self.turns.retention is not None
        return self.turns.retention

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
        """The run context of one turn for ``user_id``, on the service's resources."""
        return self.resources.context(user_id)

    def pool_stats(self) -> dict[str, int]:
        """The PostgreSQL pool's counters (connections, waiting requests); empty on SQLite."""
        pool = getattr(self.db, "pool", None)
        return pool.get_stats() if pool is not None else {}


class TurnMetrics:
    """The service's metrics of turns: lock waits, outcomes, the pool after each turn."""

    def __init__(self) -> None:
        """Count nothing until ``service`` is set (once the service exists)."""
        self.service: Service | None = None

    def lock_waited(self, seconds: float) -> None:
        """Observe a wait for a turn lock."""
        metrics.LOCK_WAIT.observe(seconds)

    def turn_ended(self, result: TurnResult | None, seconds: float, command: bool) -> None:
        """Count a turn (a command by its events, not as a turn) and note the pool's state."""
        if self.service is None:
            return
        if not command:
            metrics.count_turn(result, seconds, self.service.resources.tools)
        elif result is not None:
            metrics.count_events(result.events)
        metrics.count_pool(self.service.pool_stats())


@asynccontextmanager
async def open_service(settings: Settings, tools: Sequence[BaseTool]) -> AsyncIterator[Service]:
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
        graph = build_graph(checkpointer=saver)
        observer = TurnMetrics()
        wait = settings.enqueue_timeout_seconds if settings.double_text == "enqueue" else 0.0
        turns = Turns(
            graph=graph,
            resources=resources,
            db=db,
            locks=TurnLocks(backend.process_locks, resources.conversations),
            retention=Retention(saver, settings.checkpoint_keep),
            wait_seconds=wait,
            observer=observer,
        )
        service = Service(
            settings, backend, graph, resources, turns, SocketCounts(settings.metrics_dir)
        )
        observer.service = service
        try:
            yield service
        finally:
            await turns.drain()
