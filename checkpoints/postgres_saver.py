"""LangGraph's PostgreSQL saver as keel runs it: on the process's pool, no call waiting for another.

``AsyncPostgresSaver`` takes one asyncio lock around every read and write (it is written for one
shared connection as much as for a pool), so on a pool the checkpoints of all the process's turns
queue behind one another; it serialises each checkpoint in a worker thread, a hand-over that costs
more than the serialising; and it writes a checkpoint's blobs and its row as statements of their
own. ``PoolPostgresSaver`` is the same saver - the same tables, rows and serialisation - whose
calls each take a pooled connection of their own without that lock, and which serialises a
checkpoint in the loop's thread and writes it in one statement. Written against
langgraph-checkpoint-postgres 3.2.0 (``_cursor`` and ``aput``);
``tests/integration/test_stores_on_postgres.py`` reads what it writes with LangGraph's own saver.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    get_serializable_checkpoint_metadata,
)
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.postgres.base import UPSERT_CHECKPOINTS_SQL
from langgraph.checkpoint.serde.types import _DeltaSnapshot
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

BLOB_ROW = "(%s, %s, %s, %s, %s, %s)"
PUT_BLOBS = (
    "WITH blobs AS (INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, "
    "type, blob) VALUES {rows} ON CONFLICT (thread_id, checkpoint_ns, channel, version) "
    "DO NOTHING) "
)
"""The changed channels' blobs, written by the statement that writes their checkpoint."""


@functools.lru_cache(maxsize=64)
def _put_sql(blobs: int) -> str:
    """One statement writing ``blobs`` blob rows and the checkpoint row (LangGraph's own SQL)."""
    put = UPSERT_CHECKPOINTS_SQL.strip().rstrip(";")
    if not blobs:
        return put
    return PUT_BLOBS.format(rows=", ".join([BLOB_ROW] * blobs)) + put


class PoolPostgresSaver(AsyncPostgresSaver):
    """``AsyncPostgresSaver`` on a pool without its process-wide lock, serialising inline."""

    @asynccontextmanager
    async def _cursor(self, *, pipeline: bool = False) -> AsyncIterator[Any]:
        """A cursor on a pooled connection of the call's own (the saver's way without a pool)."""
        if not isinstance(self.conn, AsyncConnectionPool) or self.pipe is not None:
            async with super()._cursor(pipeline=pipeline) as cur:
                yield cur
            return
        async with self.conn.connection() as conn:
            if pipeline and self.supports_pipeline:
                async with conn.pipeline(), conn.cursor(binary=True, row_factory=dict_row) as cur:
                    yield cur
            else:
                async with conn.cursor(binary=True, row_factory=dict_row) as cur:
                    yield cur

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Write ``checkpoint`` as ``AsyncPostgresSaver.aput`` does, its blobs dumped inline."""
        configurable = config["configurable"].copy()
        thread_id = configurable.pop("thread_id")
        checkpoint_ns = configurable.pop("checkpoint_ns")
        parent_id = configurable.pop("checkpoint_id", None)
        copy = checkpoint.copy()
        copy["channel_values"] = copy["channel_values"].copy()
        blob_values = {}
        for key, value in checkpoint["channel_values"].items():
            if isinstance(value, _DeltaSnapshot):
                blob_values[key] = copy["channel_values"].pop(key)
                copy["channel_values"][key] = True
            elif value is not None and not isinstance(value, str | int | float | bool):
                blob_values[key] = copy["channel_values"].pop(key)
        versions = {k: v for k, v in new_versions.items() if k in blob_values}
        row = (
            thread_id,
            checkpoint_ns,
            checkpoint["id"],
            parent_id,
            Jsonb(copy),
            Jsonb(get_serializable_checkpoint_metadata(config, metadata)),
        )
        blobs = self._dump_blobs(thread_id, checkpoint_ns, blob_values, versions)
        async with self._cursor() as cur:  # one statement: blobs and checkpoint together
            await cur.execute(_put_sql(len(blobs)), [v for blob in blobs for v in blob] + list(row))
        ids = {"thread_id": thread_id, "checkpoint_ns": checkpoint_ns}
        return {"configurable": {**ids, "checkpoint_id": checkpoint["id"]}}
