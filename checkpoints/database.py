"""The SQLAlchemy engine for keel's app tables, opened from the same URL as the checkpointer.

``open_database(url)`` yields an ``AsyncEngine`` with the schema migrated to the newest
revision. SQLite runs in WAL mode with a busy timeout so the checkpointer's connection and the
app's can share the file; ``memory`` is an in-process SQLite database that lives as long as the
engine.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import StaticPool

from checkpoints.migrate import upgrade
from checkpoints.urls import DatabaseURL, parse_database_url

SQLITE_BUSY_TIMEOUT_MS = 10_000


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    cursor = dbapi_conn.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cursor.close()


def create_engine(db: DatabaseURL) -> AsyncEngine:
    """Create (but do not connect) the async engine for ``db``."""
    if db.kind == "memory":
        return create_async_engine(
            "sqlite+aiosqlite://",
            poolclass=StaticPool,
            connect_args={"check_same_thread": False},
        )
    if db.kind == "sqlite":
        assert db.path is not None
        db.path.parent.mkdir(parents=True, exist_ok=True)
        engine = create_async_engine(f"sqlite+aiosqlite:///{db.path}")
        sa.event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
        return engine
    conninfo = db.conninfo.replace("postgresql://", "postgresql+psycopg://", 1)
    return create_async_engine(conninfo, pool_pre_ping=True, pool_size=5, max_overflow=5)


@asynccontextmanager
async def open_database(url: str) -> AsyncIterator[AsyncEngine]:
    """Open the app database named by ``url``, migrated to the newest schema."""
    engine = create_engine(parse_database_url(url))
    try:
        await upgrade(engine)
        yield engine
    finally:
        await engine.dispose()
