"""What the server holds for its lifetime: keel's parts (``keel.graphs.assembly``) and its sockets.

``open_service(settings)`` opens them in the app's lifespan; routers reach them through
``keel.api.deps``. Every turn, and everything that must not run beside one (a delete), goes
through ``service.turns`` (``keel.graphs.turns``): the routers only translate HTTP and WebSocket to
it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from langchain_core.tools import BaseTool

from keel.api import prometheus
from keel.api.socket_counts import SocketCounts
from keel.checkpoints.reminders import Reminder
from keel.graphs.assembly import Keel, open_keel
from keel.graphs.reminding import Delivery, delivering
from keel.graphs.result import TurnResult
from keel.graphs.settings import Settings


@dataclass
class Service(Keel):
    """The long-lived parts of a running server."""

    sockets: SocketCounts = field(default_factory=lambda: SocketCounts(None))
    """Open WebSockets per user on this server (its workers together)."""
    delivery: Delivery | None = None
    """This process's share of delivering reminders (its listeners hear each outcome)."""

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
        prometheus.LOCK_WAIT.observe(seconds)

    def turn_ended(self, result: TurnResult | None, seconds: float, command: bool) -> None:
        """Count a turn (a command by its events, not as a turn) and note the pool's state."""
        if self.service is None:
            return
        if not command:
            prometheus.count_turn(result, seconds, self.service.resources.tools)
        elif result is not None:
            prometheus.count_events(result.events)
        prometheus.count_pool(self.service.pool_stats())


@asynccontextmanager
async def open_service(
    settings: Settings, tools: Sequence[BaseTool] | None = None
) -> AsyncIterator[Service]:
    """Open keel's parts for serving; ``tools``: what the agent may call (default: the settings').

    A turn on a busy conversation waits for it only when ``KEEL_DOUBLE_TEXT=enqueue``.
    """
    observer = TurnMetrics()
    wait = settings.enqueue_timeout_seconds if settings.double_text == "enqueue" else 0.0
    async with (
        open_keel(settings, tools, wait_seconds=wait, observer=observer) as keel,
        delivering(keel.turns, settings.reminder_poll_seconds, [count_reminder]) as delivery,
    ):
        service = Service(
            **vars(keel), sockets=SocketCounts(settings.metrics_dir), delivery=delivery
        )
        observer.service = service
        yield service


def count_reminder(reminder: Reminder, outcome: str) -> None:
    """Count a reminder's delivery by its outcome."""
    prometheus.REMINDERS.labels(outcome).inc()
