"""A turn, from a client's message to its answer: start reading keel here.

``Turns`` is what every client of the service calls - the HTTP API (JSON and SSE), the WebSocket,
``keel chat`` and ``keel telegram``: ``start`` or ``take`` a turn, ``open`` a conversation
(finishing a turn a crash cut off), ``stop`` a running turn, ``delete`` a conversation. A turn
first takes the conversation's turn lock (``keel.checkpoints.locks``), and in the same step the
conversation is checked to exist and to be the user's (a conversation deleted by any process is
gone for every later turn: ``ConversationNotFound``; a busy one raises ``ConversationLocked``, or
is waited for, ``wait_seconds``), and the newest checkpoint's id is read with it. Then
``keel.graphs.run_turn`` runs it: where the conversation stands (from memory when this process's
last turn left it and the newest checkpoint is still the one it knows), the turn before settled,
exactly once, the run, the outcome recorded. After it, where the
turn left the conversation is remembered.

Turns run in tasks of their own (``start``), so a client that leaves never cuts one short or
strands its lock; ``drain`` lets them finish when the service closes.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Coroutine
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import structlog
from langgraph.checkpoint.base import BaseCheckpointSaver

from keel.checkpoints.branches import BEGINNING
from keel.checkpoints.database import Database
from keel.checkpoints.locks import ConversationLocked, TurnLocks
from keel.checkpoints.requests import RequestStore
from keel.checkpoints.retention import latest_checkpoint_id
from keel.graphs.builder import KeelGraph
from keel.graphs.result import TurnResult
from keel.graphs.run_turn import kept_checkpoint, run_turn, settle
from keel.graphs.runner import EventSink
from keel.nodes.run_context import Resources, TurnStart
from keel.nodes.state.schema import TurnCommand

log = structlog.get_logger(__name__)

T = TypeVar("T")
KNOWN_CONVERSATIONS = 10_000
SHUTDOWN_GRACE_SECONDS = 30


class TurnObserver(Protocol):
    """Told how long turns waited for their lock and how they ended (the service's metrics)."""

    def lock_waited(self, seconds: float) -> None:
        """A turn waited ``seconds`` for its lock (got it or not)."""
        ...

    def turn_ended(self, result: TurnResult | None, seconds: float, command: bool) -> None:
        """A turn ended after ``seconds`` (``result`` None: it failed; ``command``: it ran one)."""
        ...


class Unobserved:
    """Nobody is told (the terminal chat)."""

    def lock_waited(self, seconds: float) -> None:  # noqa: D102
        return None

    def turn_ended(self, result: TurnResult | None, seconds: float, command: bool) -> None:  # noqa: D102
        return None


@dataclass
class Turns:
    """Every turn of a service (or of a terminal chat), from arrival to answer."""

    graph: KeelGraph
    resources: Resources
    """Stores, the chat model (tools bound) and settings shared by every turn."""
    db: Database
    """keel's tables: keyed requests, the newest checkpoint's id."""
    locks: TurnLocks
    wait_seconds: float = 0.0
    """How long a turn waits for a conversation another turn holds (0: ConversationLocked)."""
    observer: TurnObserver = field(default_factory=Unobserved)
    known: OrderedDict[str, str | None] = field(default_factory=OrderedDict)
    """Per conversation: the checkpoint this process's last turn ended on (not cut off)."""
    stops: dict[str, asyncio.Event] = field(default_factory=dict)
    """The turns running in this process, by conversation: setting the event stops the turn."""
    tasks: set[asyncio.Task[Any]] = field(default_factory=set)
    requests: RequestStore = field(init=False)
    """Messages sent with an idempotency key, and their outcomes."""

    def __post_init__(self) -> None:
        """Record keyed messages in keel's tables."""
        self.requests = RequestStore(self.db)

    @asynccontextmanager
    async def holding(
        self, conversation_id: str, user: str, wait: float | None = None
    ) -> AsyncIterator[str | None]:
        """Step 1: hold the user's conversation (ConversationNotFound, ConversationLocked).

        Gives its newest checkpoint's id when it was read on the way (else None).
        """
        asked = time.monotonic()
        wait = self.wait_seconds if wait is None else wait
        try:
            async with self.locks.hold(conversation_id, wait=wait, user=user) as newest:
                self.observer.lock_waited(time.monotonic() - asked)
                yield newest
        except ConversationLocked:
            self.observer.lock_waited(time.monotonic() - asked)
            raise

    async def start(
        self,
        conversation_id: str,
        user: str,
        content: str,
        sink: EventSink | None = None,
        key: str | None = None,
        command: TurnCommand | None = None,
        from_checkpoint: str | None = None,
        timezone: str | None = None,
        wait: float | None = None,
    ) -> asyncio.Task[TurnResult]:
        """Take the conversation, then run the turn in a task of its own (outliving the caller).

        ``from_checkpoint``: run it from that checkpoint (``CheckpointNotKept`` when the
        conversation does not keep it), not the newest: see ``run_turn``. ``timezone``: the
        user's, where the caller knows it (else the process's ``KEEL_TIMEZONE``). ``wait``: how
        long to wait for a busy conversation (else ``wait_seconds``).
        """
        context = self.resources.context(user, **({"timezone": timezone} if timezone else {}))
        stack = AsyncExitStack()
        newest = await stack.enter_async_context(self.holding(conversation_id, user, wait))
        if from_checkpoint is not None:
            try:
                if not await self._answered(conversation_id, key):  # else its answer is given
                    await kept_checkpoint(self.graph, conversation_id, from_checkpoint)
            except BaseException:
                await stack.aclose()
                raise
        stop = self.stops[conversation_id] = asyncio.Event()

        async def turn() -> TurnResult:
            async with stack:
                result, began = None, time.monotonic()
                try:
                    result = await run_turn(
                        self.graph,
                        conversation_id,
                        content,
                        context,
                        sink,
                        start=await self._start_of(conversation_id, newest),
                        stop=stop,
                        key=key,
                        requests=self.requests,
                        command=command,
                        held=True,
                        from_checkpoint=from_checkpoint,
                    )
                finally:
                    self.stops.pop(conversation_id, None)
                    self.observer.turn_ended(result, time.monotonic() - began, command is not None)
                    await self._remember(conversation_id, result)
                return result

        return self.track(turn())

    async def take(
        self,
        conversation_id: str,
        user: str,
        content: str,
        key: str | None = None,
        command: TurnCommand | None = None,
        from_checkpoint: str | None = None,
        timezone: str | None = None,
        wait: float | None = None,
    ) -> TurnResult:
        """Run one turn to its end and return its result (it goes on if the caller leaves)."""
        task = await self.start(
            conversation_id,
            user,
            content,
            key=key,
            command=command,
            from_checkpoint=from_checkpoint,
            timezone=timezone,
            wait=wait,
        )
        return await asyncio.shield(task)

    async def open(self, conversation_id: str, user: str) -> TurnResult | None:
        """Finish a turn a crash cut off (recording its keyed outcome); None when there is none."""
        async with self.holding(conversation_id, user):
            context = self.resources.context(user)
            _, recovered = await settle(self.graph, conversation_id, context, None, self.requests)
            self.known.pop(conversation_id, None)
            return recovered

    def stop(self, conversation_id: str) -> bool:
        """Ask this process's turn on the conversation to stop; False when none runs here."""
        stop = self.stops.get(conversation_id)
        if stop is None:
            return False
        stop.set()
        return True

    async def running(self, conversation_id: str) -> bool:
        """A turn holds the conversation, in this process or another."""
        return await self.locks.running(conversation_id)

    async def delete(self, conversation_id: str, user: str) -> None:
        """Delete the user's conversation, everything of it in one transaction (tasks stay).

        Taken like a turn: no turn runs on it meanwhile, and none after (its row is gone).
        """
        async with self.holding(conversation_id, user):
            await self.erase(conversation_id)

    async def erase(self, conversation_id: str) -> None:
        """Delete a conversation the caller holds (or has just made and nobody knows yet)."""
        saver = self._saver()
        left = await self.resources.conversations.delete(conversation_id, saver)
        for thread_id in left:  # checkpoints kept outside keel's database
            if saver is not None:
                await saver.adelete_thread(thread_id)
        self.known.pop(conversation_id, None)

    async def _answered(self, conversation_id: str, key: str | None) -> bool:
        """A message sent with ``key`` ran to its end already."""
        if key is None:
            return False
        noted = await self.requests.get(conversation_id, key)
        return noted is not None and noted.result is not None

    async def _start_of(self, conversation_id: str, newest: str | None) -> TurnStart | None:
        """Where the conversation stands, if nothing changed it since this process's last turn.

        The newest checkpoint's id (read with the lock, else one index lookup) instead of reading
        and decoding the state: a turn cut off since wrote a newer one (its input's, at least).
        """
        if conversation_id not in self.known or (saver := self._saver()) is None:
            return None
        latest = newest
        if latest is None:  # not read with the lock (or none is left: read again to be sure)
            latest = await latest_checkpoint_id(saver, self.db, conversation_id)
        if latest != self.known[conversation_id]:
            return None
        return TurnStart(latest or BEGINNING)

    async def _remember(self, conversation_id: str, result: TurnResult | None) -> None:
        """Note where a turn left the conversation (``None``: forget it, the turn failed)."""
        self.known.pop(conversation_id, None)
        if result is None or (saver := self._saver()) is None:
            return
        self.known[conversation_id] = await latest_checkpoint_id(saver, self.db, conversation_id)
        if len(self.known) > KNOWN_CONVERSATIONS:
            self.known.popitem(last=False)

    def _saver(self) -> BaseCheckpointSaver | None:
        saver = self.graph.checkpointer
        return saver if isinstance(saver, BaseCheckpointSaver) else None

    def track(self, work: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        """Run ``work`` in a task of the service's own, which outlives the request."""
        task = asyncio.create_task(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    async def drain(self) -> None:
        """Let the turns under way finish (bounded)."""
        if self.tasks:
            await asyncio.wait(self.tasks, timeout=SHUTDOWN_GRACE_SECONDS)
