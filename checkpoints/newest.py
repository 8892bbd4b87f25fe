"""A conversation's newest checkpoint, kept by the process that wrote it, for the reads that follow.

A turn's graph run starts from its conversation's newest checkpoint, and most times the
checkpoint is one this process has just written: the turn before left it. ``NewestKept`` is mixed
into keel's savers: every checkpoint a turn writes is kept (serialised, so a read gets fresh
objects, as from the database) with the pending writes that follow it, and a read of the newest
checkpoint is answered from it while ``holding`` says that it is the newest.

``holding(thread_id, newest)`` is what the turn runner opens around a turn, while the turn lock
keeps every other process off the thread: ``newest`` is the checkpoint id the service found newest
in the database when the turn began (None when it does not know it). Outside a turn (Studio, the
SDK, the legacy import, another process) nothing is answered from memory, and a write
from outside a turn drops what was kept.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_metadata,
)

from keel.checkpoints.branches import BEGINNING

KEPT_BYTES = 64 * 1024 * 1024
"""The serialised checkpoints a process keeps, at most, the most recently written first."""

_HELD: ContextVar[dict[str, str | None] | None] = ContextVar("keel_held_thread", default=None)


@contextmanager
def holding(thread_id: str, newest: str | None) -> Iterator[None]:
    """A turn holds ``thread_id``; its newest checkpoint is ``newest`` (None: not known)."""
    held: dict[str, str | None] = {thread_id: newest}
    token = _HELD.set(held)
    try:
        yield
    finally:
        held.clear()  # a task started during the turn shares the dict: it holds nothing after
        _HELD.reset(token)


@dataclass
class _Kept:
    checkpoint_id: str
    checkpoint: tuple[str, bytes]
    metadata: str
    """JSON, as the savers store it."""
    parent_id: str | None
    writes: dict[tuple[str, int], tuple[str, str, tuple[str, bytes]]] = field(default_factory=dict)
    """(task id, index) -> (task path, channel, serialised value): the savers' key."""

    @property
    def size(self) -> int:
        return len(self.checkpoint[1]) + sum(len(w[2][1]) for w in self.writes.values())


def _thread(config: RunnableConfig) -> tuple[str, str, str | None]:
    configurable = config.get("configurable") or {}
    return (
        str(configurable.get("thread_id")),
        str(configurable.get("checkpoint_ns") or ""),
        configurable.get("checkpoint_id"),
    )


def rooted(config: RunnableConfig) -> RunnableConfig:
    """The config a checkpoint is written under, a run from ``BEGINNING`` given no parent.

    A turn run from before a conversation's first checkpoint (its first message edited) names
    ``BEGINNING``, which no checkpoint has: LangGraph starts it from an empty state, and would
    write the name as its checkpoint's parent.
    """
    configurable = config.get("configurable") or {}
    if configurable.get("checkpoint_id") != BEGINNING:
        return config
    ids = {k: v for k, v in configurable.items() if k != "checkpoint_id"}
    return {**config, "configurable": ids}


class Rooted(BaseCheckpointSaver):
    """Mixed into a saver that keeps nothing: ``rooted`` checkpoints (the in-memory backend's)."""

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Write ``checkpoint``, with no parent when its run started from ``BEGINNING``."""
        return await super().aput(rooted(config), checkpoint, metadata, new_versions)


class NewestKept(BaseCheckpointSaver):
    """Mixed into a saver: the newest checkpoint of the threads this process's turns hold."""

    _kept: OrderedDict[str, _Kept]

    _kept_bytes: int = 0

    def kept(self) -> OrderedDict[str, _Kept]:
        """The kept checkpoints by thread (made on first use: savers have their own __init__)."""
        if "_kept" not in self.__dict__:
            self._kept = OrderedDict()
        return self._kept

    def _drop(self, thread_id: str) -> None:
        dropped = self.kept().pop(thread_id, None)
        if dropped is not None:
            self._kept_bytes -= dropped.size

    def _keep(self, thread_id: str, kept: _Kept) -> None:
        self._drop(thread_id)
        self.kept()[thread_id] = kept
        self._kept_bytes += kept.size
        while self._kept_bytes > KEPT_BYTES and len(self._kept) > 1:
            self._drop(next(iter(self._kept)))

    def forget(self, thread_id: str) -> None:
        """Drop what is kept of ``thread_id`` (its checkpoints were deleted beside the saver)."""
        self._drop(thread_id)

    def newest_kept(self, thread_id: str) -> str | None:
        """The id of the newest checkpoint a turn of this process wrote on ``thread_id``."""
        kept = self.kept().get(thread_id)
        return kept.checkpoint_id if kept is not None else None

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Write ``checkpoint`` (``rooted``); keep it when a turn holds its thread.

        It is kept before it is written, so that the pending writes LangGraph puts beside it while
        it is being written (an interrupt's) are kept with it; reads are answered from memory only
        once the database has it.
        """
        config = rooted(config)
        thread, ns, parent = _thread(config)
        if ns:  # a subgraph's checkpoint: the thread's newest root checkpoint is unchanged
            return await super().aput(config, checkpoint, metadata, new_versions)
        held = _HELD.get()
        if held is None or thread not in held:
            self._drop(thread)
            return await super().aput(config, checkpoint, metadata, new_versions)
        stored = json.dumps(get_checkpoint_metadata(config, metadata), ensure_ascii=False)
        kept = _Kept(str(checkpoint["id"]), self.serde.dumps_typed(checkpoint), stored, parent)
        self._keep(thread, kept)
        try:
            saved = await super().aput(config, checkpoint, metadata, new_versions)
        except BaseException:  # stopped or failed: whether the database has it is not known
            self._drop(thread)
            raise
        if str(saved["configurable"]["checkpoint_id"]) == kept.checkpoint_id:
            held[thread] = kept.checkpoint_id
        else:  # a saver that names its checkpoints itself: nothing kept
            self._drop(thread)
        return saved

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Write a task's pending writes; keep them beside their kept checkpoint."""
        thread, ns, checkpoint_id = _thread(config)
        try:
            await super().aput_writes(config, writes, task_id, task_path)
        except BaseException:  # stopped or failed: whether the database has them is not known
            self._drop(thread)
            raise
        kept = self.kept().get(thread)
        if ns or kept is None or kept.checkpoint_id != checkpoint_id:
            return
        replace = all(channel in WRITES_IDX_MAP for channel, _ in writes)  # the savers' rule
        for idx, (channel, value) in enumerate(writes):
            key = (task_id, WRITES_IDX_MAP.get(channel, idx))
            if replace or key not in kept.writes:
                self._kept_bytes -= kept.size
                kept.writes[key] = (task_path, channel, self.serde.dumps_typed(value))
                self._kept_bytes += kept.size

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The newest checkpoint from memory while a turn holds the thread; else the database."""
        thread, ns, checkpoint_id = _thread(config)
        held = _HELD.get()
        kept = self.kept().get(thread)
        if (
            ns
            or checkpoint_id is not None
            or held is None
            or kept is None
            or held.get(thread) != kept.checkpoint_id
        ):
            return await super().aget_tuple(config)
        parent = None
        if kept.parent_id is not None:
            ids = {"thread_id": thread, "checkpoint_ns": "", "checkpoint_id": kept.parent_id}
            parent = {"configurable": ids}
        order = sorted(kept.writes, key=lambda key: (kept.writes[key][0], *key))  # as stored
        ids = {"thread_id": thread, "checkpoint_ns": "", "checkpoint_id": kept.checkpoint_id}
        return CheckpointTuple(
            config={"configurable": ids},
            checkpoint=self.serde.loads_typed(kept.checkpoint),
            metadata=json.loads(kept.metadata),
            parent_config=parent,  # type: ignore[arg-type]
            pending_writes=[
                (key[0], kept.writes[key][1], self.serde.loads_typed(kept.writes[key][2]))
                for key in order
            ],
        )

    async def adelete_thread(self, thread_id: str) -> None:
        """Delete the thread, and what is kept of it."""
        self._drop(str(thread_id))
        await super().adelete_thread(thread_id)
