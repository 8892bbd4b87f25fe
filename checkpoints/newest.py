"""A conversation's newest checkpoint, kept by the process that wrote it, for the reads that follow.

A turn reads its conversation's newest checkpoint twice (each of its two graph runs starts from
it), and both times the checkpoint is one this process has just written: the turn before left
it, or the turn's own stop before tool execution. ``NewestKept`` is mixed into keel's savers: every
checkpoint a turn writes is kept (serialised, so a read gets fresh objects, as from the database)
with the pending writes that follow it, and a read of the newest checkpoint is answered from it
while ``holding`` says that it is the newest.

``holding(thread_id, newest)`` is what the turn runner opens around a turn, while the turn lock
keeps every other process off the thread: ``newest`` is the checkpoint id the service found newest
in the database when the turn began (None when it does not know it). Outside a turn (Studio, the
SDK, the reset and reopen commands, another process) nothing is answered from memory, and a write
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

KEPT_THREADS = 10_000
"""Conversations whose newest checkpoint a process keeps, the most recently written ones."""

_HELD: ContextVar[dict[str, str | None] | None] = ContextVar("keel_held_thread", default=None)


@contextmanager
def holding(thread_id: str, newest: str | None) -> Iterator[None]:
    """A turn holds ``thread_id``; its newest checkpoint is ``newest`` (None: not known)."""
    token = _HELD.set({thread_id: newest})
    try:
        yield
    finally:
        _HELD.reset(token)


@dataclass
class _Kept:
    config: RunnableConfig
    checkpoint: tuple[str, bytes]
    metadata: CheckpointMetadata
    parent_id: str | None
    writes: dict[tuple[str, str, int], tuple[str, tuple[str, bytes]]] = field(default_factory=dict)
    """(task path, task id, index) -> (channel, serialised value)."""

    @property
    def checkpoint_id(self) -> str:
        return str(self.config["configurable"]["checkpoint_id"])


def _thread(config: RunnableConfig) -> tuple[str, str, str | None]:
    configurable = config.get("configurable") or {}
    return (
        str(configurable.get("thread_id")),
        str(configurable.get("checkpoint_ns") or ""),
        configurable.get("checkpoint_id"),
    )


class NewestKept(BaseCheckpointSaver):
    """Mixed into a saver: the newest checkpoint of the threads this process's turns hold."""

    _kept: OrderedDict[str, _Kept]

    def kept(self) -> OrderedDict[str, _Kept]:
        """The kept checkpoints by thread (made on first use: savers have their own __init__)."""
        if "_kept" not in self.__dict__:
            self._kept = OrderedDict()
        return self._kept

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
        """Write ``checkpoint``; keep it when a turn holds its thread."""
        saved = await super().aput(config, checkpoint, metadata, new_versions)
        thread, ns, parent = _thread(config)
        held, kept = _HELD.get(), self.kept()
        kept.pop(thread, None)
        if ns or held is None or thread not in held:
            return saved
        held[thread] = str(saved["configurable"]["checkpoint_id"])
        stored = json.loads(json.dumps(get_checkpoint_metadata(config, metadata), default=str))
        kept[thread] = _Kept(saved, self.serde.dumps_typed(checkpoint), stored, parent)
        if len(kept) > KEPT_THREADS:
            kept.popitem(last=False)
        return saved

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Write a task's pending writes; keep them beside their kept checkpoint."""
        await super().aput_writes(config, writes, task_id, task_path)
        thread, ns, checkpoint_id = _thread(config)
        kept = self.kept().get(thread)
        if ns or kept is None or kept.checkpoint_id != checkpoint_id:
            return
        for idx, (channel, value) in enumerate(writes):
            key = (task_path, task_id, WRITES_IDX_MAP.get(channel, idx))
            if channel in WRITES_IDX_MAP or key not in kept.writes:  # the savers' own rule
                kept.writes[key] = (channel, self.serde.dumps_typed(value))

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
        return CheckpointTuple(
            config=kept.config,
            checkpoint=self.serde.loads_typed(kept.checkpoint),
            metadata=kept.metadata,
            parent_config=parent,  # type: ignore[arg-type]
            pending_writes=[
                (task_id, channel, self.serde.loads_typed(value))
                for (_, task_id, _), (channel, value) in sorted(kept.writes.items())
            ],
        )

    async def adelete_thread(self, thread_id: str) -> None:
        """Delete the thread, and what is kept of it."""
        self.kept().pop(str(thread_id), None)
        await super().adelete_thread(thread_id)
