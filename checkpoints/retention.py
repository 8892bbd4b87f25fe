"""Checkpoint retention: keep a conversation's last N checkpoints and what they are rebuilt from.

keel keeps its message log outside graph state, so old checkpoints hold nothing that is not
elsewhere; ``prune_thread`` removes all but the newest ``keep`` and the few older ones they are
rebuilt from (``messages`` is stored as each step's writes, whole every few of them), with their
pending writes, and on PostgreSQL and in memory the channel blobs no kept checkpoint refers to.
keel's savers do it themselves (``Pruned``), in the background every few dozen checkpoints a
thread is written, which keeps the stored bytes per conversation bounded; ``keel db prune`` runs
it over every thread. The message log and the tasks are never touched. This module is the policy
only: how a saver's storage is pruned is ``keel.checkpoints.saver_internals``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import structlog
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
)

from keel.checkpoints.branches import CheckpointNotKept
from keel.checkpoints.database import Database
from keel.checkpoints.saver_internals import internals_of

log = structlog.get_logger(__name__)

DEFAULT_KEEP = 50
PRUNE_EVERY = 40
"""Checkpoints written to a thread between two background prunes (ten tool turns, four each):
at most ``keep`` + 40 a process writing to it are kept."""


async def latest_checkpoint_id(
    saver: BaseCheckpointSaver, db: Database, thread_id: str
) -> str | None:
    """The id of the thread's newest checkpoint: one index lookup, nothing deserialised.

    ``db`` is keel's tables in the same database as the saver's (SQLite, PostgreSQL).
    """
    return await internals_of(saver).latest_checkpoint_id(db, thread_id)


async def prune_all(saver: BaseCheckpointSaver, keep: int) -> int:
    """Prune every thread to its newest ``keep`` checkpoints; return how many threads."""
    threads = await internals_of(saver).thread_ids()
    for thread_id in threads:
        await prune_thread(saver, thread_id, keep)
    return len(threads)


async def prune_thread(
    saver: BaseCheckpointSaver, thread_id: str, keep: int = DEFAULT_KEEP, upto: str | None = None
) -> None:
    """Keep only the newest ``keep`` checkpoints of ``thread_id`` (with ``upto``, a checkpoint
    id: the newest ``keep`` up to that one, and every one written after it), and those they are
    rebuilt from.
    """  # noqa: D205
    if keep < 1:
        raise ValueError("keep must be at least 1")
    await internals_of(saver).prune(thread_id, keep, upto)


class Pruned(BaseCheckpointSaver):
    """Mixed into keel's savers: each thread keeps its newest ``keep`` checkpoints.

    A thread is pruned in the background at the first checkpoint this process writes to it (so a
    conversation used in many short sessions, ``keel chat``'s, is kept bounded too), then every
    ``prune_every`` checkpoints, one prune at a time: a prune never delays a write or a reply, and
    never holds more than one pooled connection; a failed one is logged and tried again later. A
    prune keeps the newest ``keep`` of the checkpoints up to the one that called for it, and every
    one written since, whenever it gets to run. Whoever writes checkpoints through keel's saver
    (keel's turns, ``open_backend``'s users, tests) gets it.
    """

    keep: int = DEFAULT_KEEP
    """Checkpoints kept per thread (``KEEL_CHECKPOINT_KEEP``)."""
    prune_every: int = PRUNE_EVERY
    """Checkpoints written to a thread between two of its prunes."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """The saver's own, and nothing written or pruned yet."""
        super().__init__(*args, **kwargs)
        self._written: dict[str, int] = {}
        self._one_at_a_time = asyncio.Semaphore(1)
        self._prunes: dict[asyncio.Task[None], str] = {}
        """The prunes under way, and the thread of each."""

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Write ``checkpoint``; every ``prune_every`` of a thread, prune it in the background."""
        written = await super().aput(config, checkpoint, metadata, new_versions)
        thread_id = str(config["configurable"]["thread_id"])
        count = self._written.pop(thread_id, self.prune_every - 1) + 1  # new here: due now
        if count >= self.prune_every:
            count = 0
            upto = str(written["configurable"]["checkpoint_id"])
            task = asyncio.create_task(self._prune(thread_id, upto))
            self._prunes[task] = thread_id
            task.add_done_callback(self._prunes.pop)
        self._written[thread_id] = count  # re-inserted last: the dict stays in recency order
        if len(self._written) > 100_000:
            self._written.pop(next(iter(self._written)))
        return written

    async def _prune(self, thread_id: str, upto: str) -> None:
        async with self._one_at_a_time:
            try:
                await prune_thread(self, thread_id, self.keep, upto)
            except Exception as exc:  # retention is upkeep: it never fails a turn
                log.warning("prune_failed", thread_id=thread_id, error=type(exc).__name__)

    async def pruned(self, thread_id: str | None = None) -> None:
        """Wait for the prunes under way: all (before the database closes), or a thread's (before
        a turn runs from one of its older checkpoints, which a prune may be removing).
        """  # noqa: D205
        while under_way := [t for t, of in self._prunes.items() if thread_id in (None, of)]:
            await asyncio.wait(under_way)  # a waiter cancelled leaves the prunes running

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """The writes a checkpoint's delta channels are rebuilt from (``aget_tuple`` read the
        checkpoint first). A prune elsewhere (another process, ``keel db prune``) may remove an
        older checkpoint between the two reads, and its parents with it: a walk that found no
        whole copy is trusted only while the checkpoint is still there.
        """  # noqa: D205
        configurable = config.get("configurable", {})
        named = configurable.get("checkpoint_id")
        if self._prunes and named:
            await self.pruned(str(configurable["thread_id"]))
        history = await super().aget_delta_channel_history(config=config, channels=channels)
        unseeded = any("seed" not in found for found in history.values())
        if named and unseeded and await super().aget_tuple(config) is None:
            raise CheckpointNotKept(str(named))
        return history

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint ``config`` names; one named by its id (an older one: a fork's start, a
        view of the past) is read once a prune of its thread under way, which may be removing it,
        is done: it is there whole, or not at all.
        """  # noqa: D205
        configurable = config.get("configurable", {})
        if self._prunes and configurable.get("checkpoint_id"):
            await self.pruned(str(configurable["thread_id"]))
        return await super().aget_tuple(config)
