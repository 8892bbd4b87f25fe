"""Checkpoint retention: keep the last N checkpoints of a conversation, drop the rest.

keel keeps its message log outside graph state, so old checkpoints hold nothing that is not
elsewhere; ``prune_thread`` removes all but the newest ``keep`` (with their pending writes, and on
PostgreSQL and in memory the channel blobs no kept checkpoint refers to). The turn runner prunes
after every turn (``keel chat``), or ``Retention`` does it in the background every few turns (the
API), which keeps the stored bytes per conversation bounded; ``keel db prune`` runs it over every
thread. The message log and the tasks are never touched. This module is the policy only: how a
saver's storage is pruned is ``keel.checkpoints.saver_internals``.
"""

from __future__ import annotations

import asyncio

import structlog
from langgraph.checkpoint.base import BaseCheckpointSaver

from keel.checkpoints.database import Database
from keel.checkpoints.saver_internals import internals_of

log = structlog.get_logger(__name__)

DEFAULT_KEEP = 50
PRUNE_EVERY = 10
"""Turns of a conversation between two background prunes (so at most keep + ~30 are kept)."""


async def latest_checkpoint_id(
    saver: BaseCheckpointSaver, db: Database, thread_id: str
) -> str | None:
    """The id of the thread's newest checkpoint: one index lookup, nothing deserialised.

    ``db`` is keel's tables in the same database as the saver's (SQLite, PostgreSQL).
    """
    return await internals_of(saver).latest_checkpoint_id(db, thread_id)


async def thread_ids(saver: BaseCheckpointSaver) -> list[str]:
    """Every thread the saver holds checkpoints for."""
    return await internals_of(saver).thread_ids()


async def prune_all(saver: BaseCheckpointSaver, keep: int) -> int:
    """Prune every thread to its newest ``keep`` checkpoints; return how many threads."""
    threads = await thread_ids(saver)
    for thread_id in threads:
        await prune_thread(saver, thread_id, keep)
    return len(threads)


async def prune_thread(
    saver: BaseCheckpointSaver, thread_id: str, keep: int = DEFAULT_KEEP
) -> None:
    """Keep only the newest ``keep`` checkpoints of ``thread_id``."""
    if keep < 1:
        raise ValueError("keep must be at least 1")
    await internals_of(saver).prune(thread_id, keep)


class Retention:
    """Prunes conversations in the background, one prune at a time, every few turns.

    A prune never delays a reply and never holds more than one pooled connection; a failed prune
    is logged and tried again a few turns later.
    """

    def __init__(self, saver: BaseCheckpointSaver, keep: int, every: int = PRUNE_EVERY) -> None:
        """Keep ``keep`` checkpoints per conversation, checking every ``every`` turns."""
        self.saver, self.keep, self.every = saver, keep, every
        self._turns: dict[str, int] = {}
        self._one_at_a_time = asyncio.Semaphore(1)
        self._tasks: set[asyncio.Task[None]] = set()

    def after_turn(self, thread_id: str) -> None:
        """Count a turn of ``thread_id``; every ``every`` turns, prune it in the background."""
        turns = self._turns.pop(thread_id, 0) + 1
        if turns < self.every:
            self._turns[thread_id] = turns  # re-inserted last: the dict stays in recency order
            if len(self._turns) > 100_000:
                self._turns.pop(next(iter(self._turns)))
            return
        task = asyncio.create_task(self._prune(thread_id))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _prune(self, thread_id: str) -> None:
        async with self._one_at_a_time:
            try:
                await prune_thread(self.saver, thread_id, self.keep)
            except Exception as exc:  # retention is upkeep: it never fails a turn
                log.warning("prune_failed", thread_id=thread_id, error=type(exc).__name__)

    async def aclose(self) -> None:
        """Wait for the prunes under way."""
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
