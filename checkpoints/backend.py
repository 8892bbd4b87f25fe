"""One database per process: the checkpointer, keel's tables and the turn locks, opened together.

``open_backend(url, pool_size=..., pool_timeout=...)`` yields a ``Backend``:

- PostgreSQL: one psycopg ``AsyncConnectionPool`` shared by LangGraph's ``AsyncPostgresSaver`` and
  keel's tables; waiting for a connection is bounded by ``pool_timeout`` (then ``PoolTimeout``,
  which the API answers with 503); a connection idle for a second is tried before it is lent, so
  one that died meanwhile is replaced, not handed to a request. Turn locks take one more
  connection, outside the pool.
- SQLite: LangGraph's ``SqliteSaver`` (as ``LoopSqliteSaver``: statements on the event loop) and
  keel's tables on two connections to one file, serialised by one asyncio lock. WAL with
  ``synchronous=NORMAL``: a commit is durable against a crash of the process (the WAL is in the
  OS's hands), not against a power cut of the machine.
- ``memory``: an ``InMemorySaver`` and a shared in-memory SQLite database for the tables.

Migrations run before anything else is opened. Used by the API, ``keel chat``, ``keel db``, the
benchmarks and the tests.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import sqlite3
import time
import uuid
import weakref
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from keel.checkpoints.branches import Rooted
from keel.checkpoints.database import Database, PostgresDatabase, SqliteDatabase
from keel.checkpoints.migrate import migration_engine, upgrade
from keel.checkpoints.postgres_saver import PoolPostgresSaver
from keel.checkpoints.process_locks import (
    AdvisoryLocks,
    FileLocks,
    NoProcessLocks,
    ProcessLocks,
    take,
)
from keel.checkpoints.retention import DEFAULT_KEEP, Pruned
from keel.checkpoints.sqlite_saver import LoopSqliteSaver
from keel.checkpoints.urls import DatabaseURL, parse_database_url

DEFAULT_POOL_SIZE = 10
DEFAULT_POOL_TIMEOUT_SECONDS = 5.0
IDLE_CHECK_SECONDS = 1.0
SQLITE_WAL = "PRAGMA journal_mode=WAL"
SQLITE_SYNCHRONOUS = "PRAGMA synchronous=NORMAL"
STARTUP_LOCK_ID = 0x6B65656D  # "keem": beside the migrations' own "keel"
STARTUP_WAIT_SECONDS = 300
CHECKPOINT_TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
AUTOVACUUM = "autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000"
"""keel prunes old checkpoints: vacuum those tables by dead rows, not by size."""


class KeelSqliteSaver(Rooted, Pruned, LoopSqliteSaver):
    """keel's SQLite saver: statements on the event loop, checkpoints written ``rooted``."""


class KeelPostgresSaver(Rooted, Pruned, PoolPostgresSaver):
    """LangGraph's PostgreSQL saver on the pool, checkpoints written ``rooted``."""


class KeelMemorySaver(Rooted, Pruned, InMemorySaver):
    """LangGraph's in-memory saver, checkpoints written ``rooted``."""


@dataclass
class Backend:
    """The open database of a process."""

    url: DatabaseURL
    saver: Pruned
    """LangGraph's saver for the database, keeping each thread's newest checkpoints."""
    db: Database
    process_locks: ProcessLocks


def _sqlite_connect(target: str, uri: bool = False, autocommit: bool = True) -> sqlite3.Connection:
    """A connection with busy timeout 0 (its users wait a busy database out asynchronously).

    keel's tables use autocommit; the checkpointer (``autocommit=False``) Python's implicit
    transactions, which its ``SqliteSaver`` commits.
    """
    conn = sqlite3.connect(target, uri=uri, check_same_thread=False)
    if autocommit:
        conn.isolation_level = None
    for pragma in (SQLITE_SYNCHRONOUS,) if uri else (SQLITE_WAL, SQLITE_SYNCHRONOUS):
        conn.execute(pragma)  # an in-memory database has no WAL
    conn.execute("PRAGMA busy_timeout=0")
    return conn


@asynccontextmanager
async def _memory(db: DatabaseURL, offload: bool) -> AsyncIterator[Backend]:
    uri = f"file:keel-{uuid.uuid4().hex}?mode=memory&cache=shared"
    conn = await asyncio.to_thread(_sqlite_connect, uri, True)  # keeps the database alive
    try:
        await upgrade(migration_engine(db, lambda: sqlite3.connect(uri, uri=True)))
        tables = SqliteDatabase(conn, asyncio.Lock(), offload)
        yield Backend(db, KeelMemorySaver(), tables, NoProcessLocks())
    finally:
        conn.close()


@asynccontextmanager
async def _sqlite_startup_lock(path: Path) -> AsyncIterator[None]:
    """Workers starting together set the schema up one after the other (``flock``)."""
    fd = await asyncio.to_thread(
        os.open, path.with_name(path.name + ".setup.lock"), os.O_RDWR | os.O_CREAT
    )
    try:
        await asyncio.to_thread(fcntl.flock, fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the flock


@asynccontextmanager
async def _sqlite(db: DatabaseURL, offload: bool) -> AsyncIterator[Backend]:
    assert db.path is not None
    path: Path = db.path
    await asyncio.to_thread(path.parent.mkdir, parents=True, exist_ok=True)
    async with AsyncExitStack() as stack:
        async with _sqlite_startup_lock(path):
            await upgrade(migration_engine(db))
            conn = await asyncio.to_thread(_sqlite_connect, str(path))
            stack.callback(conn.close)
            saver_conn = await asyncio.to_thread(_sqlite_connect, str(path), False, False)
            stack.callback(saver_conn.close)
            lock = asyncio.Lock()
            saver = KeelSqliteSaver(saver_conn, lock, offload)
            await saver.call(saver.setup)
        locks = await asyncio.to_thread(FileLocks, path.with_name(path.name + ".turnlocks"))
        stack.push_async_callback(locks.close)
        yield Backend(db, saver, SqliteDatabase(conn, lock, offload), locks)


@asynccontextmanager
async def _postgres_startup_lock(locks: AdvisoryLocks) -> AsyncIterator[None]:
    """Workers starting together set the schema up one after the other (advisory lock).

    The lock is polled (``take``) rather than waited for inside PostgreSQL: a waiting statement
    counts as an open transaction, and the checkpointer's set-up builds indexes ``CONCURRENTLY``,
    which waits for every open transaction; a blocked waiter would deadlock it.
    """
    if not await take(locks, STARTUP_LOCK_ID, time.monotonic() + STARTUP_WAIT_SECONDS):
        raise TimeoutError("another keel process has been setting the schema up too long")
    try:
        yield
    finally:
        await locks.release(STARTUP_LOCK_ID)


class IdleCheck:
    """The pool's check before lending a connection: one that sat idle is tried first.

    A connection that died while idle (the server restarted, a network cut) is found and
    replaced before a request gets it, instead of failing that request. One that was in use a
    moment ago is lent as it is: under load, lending costs no extra round trip. When one is found
    dead, the others most likely died with it: the whole pool is checked at once, in the
    background, while the pool waits before its next try (else each dead connection would cost
    the waiting request another, longer, back-off).
    """

    def __init__(self, idle_seconds: float = IDLE_CHECK_SECONDS) -> None:
        """Try connections idle for longer than ``idle_seconds``."""
        self.idle_seconds = idle_seconds
        self.returned: weakref.WeakKeyDictionary[Any, float] = weakref.WeakKeyDictionary()
        self.pool: AsyncConnectionPool | None = None
        self._sweeps: set[asyncio.Task[None]] = set()

    async def reset(self, conn: Any) -> None:
        """Note when the connection came back to the pool."""
        self.returned[conn] = time.monotonic()

    async def check(self, conn: Any) -> None:
        """Raise if the connection no longer works (the pool then replaces it)."""
        since = self.returned.get(conn)
        if since is None or time.monotonic() - since > self.idle_seconds:
            try:
                await AsyncConnectionPool.check_connection(conn)
            except Exception:
                self._sweep()
                raise

    def _sweep(self) -> None:
        if self.pool is None or self._sweeps:
            return
        sweep = asyncio.create_task(self.pool.check())
        self._sweeps.add(sweep)
        sweep.add_done_callback(self._sweeps.discard)


@asynccontextmanager
async def _postgres(db: DatabaseURL, pool_size: int, pool_timeout: float) -> AsyncIterator[Backend]:
    idle = IdleCheck()
    pool = AsyncConnectionPool(
        db.conninfo,
        min_size=min(2, pool_size),
        max_size=pool_size,
        timeout=pool_timeout,
        kwargs={"autocommit": True, "row_factory": dict_row, "prepare_threshold": None},
        check=idle.check,
        reset=idle.reset,
        open=False,
    )
    idle.pool = pool
    locks = AdvisoryLocks(db.conninfo)
    try:
        saver = KeelPostgresSaver(pool)
        async with _postgres_startup_lock(locks):
            await upgrade(migration_engine(db))
            await pool.open(wait=True, timeout=pool_timeout)
            await saver.setup()
            async with pool.connection() as conn:
                for table in CHECKPOINT_TABLES:
                    await conn.execute(f"ALTER TABLE {table} SET ({AUTOVACUUM})")
        yield Backend(db, saver, PostgresDatabase(pool), locks)
    finally:
        await locks.close()
        await pool.close()


@asynccontextmanager
async def open_backend(
    url: str,
    *,
    pool_size: int = DEFAULT_POOL_SIZE,
    pool_timeout: float = DEFAULT_POOL_TIMEOUT_SECONDS,
    offload: bool = False,
    keep: int = DEFAULT_KEEP,
) -> AsyncIterator[Backend]:
    """Open the database named by ``url``, migrated to the newest schema.

    ``keep``: the checkpoints the saver keeps per thread (``KEEL_CHECKPOINT_KEEP``).

    ``offload``: keel's SQLite statements run in a worker thread, for a host whose event loop
    allows no blocking call (a LangGraph server); PostgreSQL's are asynchronous anyway.

    Raises:
        UnsupportedDatabaseURL: the scheme is not memory, sqlite or postgresql.
    """
    db = parse_database_url(url)
    if db.path is not None and not db.path.is_absolute():  # "sqlite:///.keel/keel.db"
        db = replace(db, path=await asyncio.to_thread(db.path.absolute))  # reads the cwd
    async with AsyncExitStack() as stack:
        if db.kind == "memory":
            backend = await stack.enter_async_context(_memory(db, offload))
        elif db.kind == "sqlite":
            backend = await stack.enter_async_context(_sqlite(db, offload))
        else:
            backend = await stack.enter_async_context(_postgres(db, pool_size, pool_timeout))
        backend.saver.keep = keep
        try:
            yield backend
        finally:
            await backend.saver.pruned()  # before the database closes
