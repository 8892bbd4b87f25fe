"""The checkpointer factory: one URL in, a LangGraph checkpoint saver out.

``open_checkpointer(url)`` is an async context manager used by the CLI, the API lifespan and the
tests. ``memory`` gives an ``InMemorySaver``; ``sqlite:///path`` an ``AsyncSqliteSaver``;
``postgresql://...`` an ``AsyncPostgresSaver`` on a psycopg pool (autocommit, dict rows, no
prepared statements so that PgBouncer-style poolers work), with ``setup()`` run and the
checkpoint tables set to be autovacuumed by dead rows (keel deletes old checkpoints every turn).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from checkpoints.database import SQLITE_BUSY_TIMEOUT_MS
from checkpoints.urls import parse_database_url

POOL_MAX_SIZE = 10
CHECKPOINT_TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
AUTOVACUUM = "autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000"
"""keel prunes old checkpoints after every turn: vacuum those tables by dead rows, not by size."""


async def _tune_autovacuum(pool: AsyncConnectionPool) -> None:
    async with pool.connection() as conn:
        for table in CHECKPOINT_TABLES:
            await conn.execute(f"ALTER TABLE {table} SET ({AUTOVACUUM})")


@asynccontextmanager
async def open_checkpointer(url: str) -> AsyncIterator[BaseCheckpointSaver]:
    """Open the checkpoint saver named by ``url``.

    Raises:
        UnsupportedDatabaseURL: the scheme is not memory, sqlite or postgresql.
    """
    db = parse_database_url(url)
    if db.kind == "memory":
        yield InMemorySaver()
        return
    if db.kind == "sqlite":
        assert db.path is not None
        db.path.parent.mkdir(parents=True, exist_ok=True)
        async with AsyncSqliteSaver.from_conn_string(str(db.path)) as saver:
            await saver.conn.execute("PRAGMA journal_mode=WAL")
            await saver.conn.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
            await saver.setup()
            yield saver
        return
    pool = AsyncConnectionPool(
        db.conninfo,
        max_size=POOL_MAX_SIZE,
        check=AsyncConnectionPool.check_connection,
        kwargs={"autocommit": True, "row_factory": dict_row, "prepare_threshold": None},
        open=False,
    )
    await pool.open(wait=True)
    try:
        pg_saver = AsyncPostgresSaver(pool)  # type: ignore[arg-type]
        await pg_saver.setup()
        await _tune_autovacuum(pool)
        yield pg_saver
    finally:
        await pool.close()
