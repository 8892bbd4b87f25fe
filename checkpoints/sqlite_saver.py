"""LangGraph's SQLite checkpointer with its statements run the way keel runs its own.

``LoopSqliteSaver`` is langgraph-checkpoint-sqlite's ``SqliteSaver`` (same tables, same SQL, same
serialisation) with the async methods a graph run calls. ``AsyncSqliteSaver`` hands every
statement to aiosqlite's thread and waits for it to come back; a statement on a local file in WAL
mode takes microseconds, far less than the hand-over, so a turn spent more time passing statements
between threads than running them. Here every call runs in the event loop's thread, under the
asyncio lock it shares with keel's tables (the two never wait on each other inside SQLite), and
another process holding the write lock is waited out asynchronously (the connection's busy timeout
is 0), as for keel's tables (``keel.checkpoints.database``). With ``offload`` (a host whose loop
must never block) every call runs in a worker thread instead.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any, TypeVar

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
)
from langgraph.checkpoint.sqlite import SqliteSaver
from typing_extensions import override

from keel.checkpoints.database import run_sqlite

T = TypeVar("T")


class LoopSqliteSaver(SqliteSaver):
    """``SqliteSaver`` with async methods that run on the event loop (or a worker thread)."""

    def __init__(self, conn: sqlite3.Connection, lock: asyncio.Lock, offload: bool = False) -> None:
        """Use ``conn`` (busy timeout 0) while holding ``lock``, the lock keel's tables take."""
        super().__init__(conn)
        self.alock, self.offload = lock, offload

    async def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)``, one of the saver's methods, under the lock."""

        def step(conn: sqlite3.Connection) -> T:
            try:
                return fn(*args, **kwargs)
            except sqlite3.OperationalError:
                if conn.in_transaction:  # a statement that met a busy database: start over
                    conn.rollback()
                raise

        async with self.alock:
            return await run_sqlite(self.conn, self.offload, step)

    @override
    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await self.call(self.get_tuple, config)

    @override
    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        def listed() -> list[CheckpointTuple]:
            return list(self.list(config, filter=filter, before=before, limit=limit))

        for item in await self.call(listed):
            yield item

    @override
    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await self.call(self.put, config, checkpoint, metadata, new_versions)

    @override
    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await self.call(self.put_writes, config, writes, task_id, task_path)

    @override
    async def adelete_thread(self, thread_id: str) -> None:
        await self.call(self.delete_thread, thread_id)

    @override
    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        return await self.call(self.get_delta_channel_history, config=config, channels=channels)
