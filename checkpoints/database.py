"""keel's own tables, reached through the checkpointer's connections: one SQL text, two engines.

``Database`` runs SQL written once with ``:name`` parameters on SQLite and PostgreSQL. It owns no
connections of its own: ``keel.checkpoints.backend.open_backend`` hands it the checkpointer's
psycopg pool (PostgreSQL: one pool per process, every statement holds a connection only for its own
transaction) or a SQLite connection serialised with the checkpointer's lock (SQLite: one writer at
a time in the process, so keel never waits on its own checkpointer in SQLite's busy handler).
Statements on SQLite run in the event loop's thread (microseconds each), and a busy database is
waited out asynchronously, never inside SQLite.

Used by the stores in ``checkpoints`` and ``keel.tools.tasks.store``; nothing outside them writes
SQL.
"""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any, Literal, TypeVar

import psycopg
from psycopg.types.json import Json
from psycopg_pool import AsyncConnectionPool
from typing_extensions import override

T = TypeVar("T")
Params = Mapping[str, Any] | None
Row = dict[str, Any]

SQLITE_TIME_FORMAT = "%Y-%m-%d %H:%M:%S.%f"
"""How timestamps are stored in SQLite (UTC, sortable as text; the format keel always used)."""


@lru_cache(maxsize=256)
def _pyformat(sql: str) -> str:
    """``:name`` placeholders as psycopg's ``%(name)s``."""
    return re.sub(r"(?<![:\w]):([A-Za-z_]\w*)", r"%(\1)s", sql)


def read_time(value: Any) -> datetime:
    """A timestamp column as an aware UTC datetime (SQLite gives text, PostgreSQL datetimes)."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value if value.tzinfo else value.replace(tzinfo=UTC)  # SQLite's come without a zone


def is_duplicate(exc: BaseException) -> bool:
    """``exc`` is a unique key refusing a row that is there already (SQLite or PostgreSQL)."""
    if isinstance(exc, sqlite3.IntegrityError):
        return "UNIQUE constraint failed" in str(exc)
    return isinstance(exc, psycopg.errors.UniqueViolation)


def read_json(value: Any) -> Any:
    """A JSON column as Python data (SQLite gives text, PostgreSQL parsed values)."""
    return json.loads(value) if isinstance(value, str) else value


class Session(ABC):
    """Runs statements: on its own (each in a transaction) or inside one transaction."""

    @abstractmethod
    async def fetch(self, sql: str, params: Params = None) -> list[Row]:
        """Run ``sql`` and return its rows (a RETURNING clause's too)."""

    async def fetchone(self, sql: str, params: Params = None) -> Row | None:
        """The first row of ``sql``, or None."""
        rows = await self.fetch(sql, params)
        return rows[0] if rows else None

    @abstractmethod
    async def execute(self, sql: str, params: Params = None) -> int:
        """Run ``sql``; return how many rows it changed."""

    @abstractmethod
    async def executemany(self, sql: str, rows: Iterable[Mapping[str, Any]]) -> int:
        """Run ``sql`` once per parameter set; return how many rows it changed in all."""


class Database(Session):
    """keel's tables on SQLite or PostgreSQL."""

    dialect: Literal["sqlite", "postgresql"]
    fold: str
    """The SQL function that folds a text's case in every script (searches compare folded)."""
    unflushed: str = ""
    """A relation to join into a write whose commit need not wait for the disk: one that a later
    commit of the same turn makes durable with it (PostgreSQL writes its log in order, and a
    commit's flush carries everything logged before it). Empty where a commit never waits for
    the disk (SQLite in WAL mode with ``synchronous=NORMAL``)."""

    @abstractmethod
    def transaction(self) -> Any:
        """``async with db.transaction() as tx``: statements on ``tx`` commit together."""

    @override
    async def executemany(self, sql: str, rows: Iterable[Mapping[str, Any]]) -> int:
        """Run ``sql`` once per parameter set, all in one transaction; the rows changed."""
        async with self.transaction() as tx:
            return await tx.executemany(sql, rows)

    @abstractmethod
    def time(self, value: datetime) -> Any:
        """A timestamp as a parameter for this database."""

    @abstractmethod
    def json(self, value: Any) -> Any:
        """JSON data as a parameter for this database."""


# --- SQLite ---------------------------------------------------------------------------------

SQLITE_BUSY_RETRY_SECONDS = 0.002
SQLITE_BUSY_WAIT_SECONDS = 10.0
"""Another process writing: wait (asynchronously) and retry, at most this long."""


def _sqlite_fetch(conn: sqlite3.Connection, sql: str, params: Params) -> list[Row]:
    cur = conn.execute(sql, dict(params or {}))
    try:
        return [dict(r) for r in cur.fetchall()] if cur.description else []
    finally:
        cur.close()


def _sqlite_run(conn: sqlite3.Connection, sql: str, params: Params) -> int:
    cur = conn.execute(sql, dict(params or {}))
    try:
        return cur.rowcount
    finally:
        cur.close()


def _sqlite_many(conn: sqlite3.Connection, sql: str, rows: list[dict[str, Any]]) -> int:
    cursor = conn.executemany(sql, rows)
    count = cursor.rowcount
    cursor.close()
    return count


async def run_sqlite(
    conn: sqlite3.Connection, offload: bool, fn: Callable[..., T], *args: Any
) -> T:
    """Run ``fn(conn, *args)`` in the event loop's thread (in a worker thread with ``offload``).

    A statement on a local SQLite file in WAL mode takes microseconds, less than handing it to a
    thread; the one wait it can meet, another process holding the write lock, is not waited out
    inside SQLite (the connection's busy timeout is 0) but here, asynchronously. ``offload`` is
    for hosts that forbid any blocking call on their loop (the LangGraph server's guard).
    """
    deadline = time.monotonic() + SQLITE_BUSY_WAIT_SECONDS
    while True:
        try:
            if offload:
                return await asyncio.to_thread(fn, conn, *args)
            return fn(conn, *args)
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
            if time.monotonic() > deadline:
                raise
        await asyncio.sleep(SQLITE_BUSY_RETRY_SECONDS)


class _SqliteTx(Session):
    def __init__(self, conn: sqlite3.Connection, offload: bool) -> None:
        self.conn, self.offload = conn, offload

    @override
    async def fetch(self, sql: str, params: Params = None) -> list[Row]:
        return await run_sqlite(self.conn, self.offload, _sqlite_fetch, sql, params)

    @override
    async def execute(self, sql: str, params: Params = None) -> int:
        return await run_sqlite(self.conn, self.offload, _sqlite_run, sql, params)

    @override
    async def executemany(self, sql: str, rows: Iterable[Mapping[str, Any]]) -> int:
        return await run_sqlite(self.conn, self.offload, _sqlite_many, sql, [dict(r) for r in rows])


def _casefold(text: str | None) -> str | None:
    """Text case folded ("Äpfel" -> "äpfel"); NULL as it is."""
    return text.casefold() if isinstance(text, str) else text


class SqliteDatabase(Database):
    """keel's tables in a SQLite file (or shared in-memory database)."""

    dialect: Literal["sqlite", "postgresql"] = "sqlite"
    fold = "keel_fold"

    def __init__(self, conn: sqlite3.Connection, lock: asyncio.Lock, offload: bool = False) -> None:
        """Use ``conn`` (autocommit mode, busy timeout 0) while holding ``lock``.

        ``lock`` is the checkpointer's, so that keel's writes and the checkpointer's never wait on
        each other inside SQLite. ``offload`` runs statements in a worker thread. ``keel_fold``
        is Python's ``str.casefold`` (SQLite's own lower() folds ASCII only).
        """
        conn.row_factory = sqlite3.Row
        conn.create_function("keel_fold", 1, _casefold, deterministic=True)
        self.conn, self.lock, self.offload = conn, lock, offload

    @override
    async def fetch(self, sql: str, params: Params = None) -> list[Row]:
        async with self.lock:
            return await run_sqlite(self.conn, self.offload, _sqlite_fetch, sql, params)

    @override
    async def execute(self, sql: str, params: Params = None) -> int:
        async with self.lock:
            return await run_sqlite(self.conn, self.offload, _sqlite_run, sql, params)

    @override
    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Session]:
        async with self.lock:
            await run_sqlite(self.conn, self.offload, _sqlite_run, "BEGIN IMMEDIATE", None)
            try:
                yield _SqliteTx(self.conn, self.offload)
                await run_sqlite(self.conn, self.offload, _sqlite_run, "COMMIT", None)
            except BaseException:
                if self.conn.in_transaction:  # never leave the shared connection mid-transaction
                    await run_sqlite(self.conn, self.offload, _sqlite_run, "ROLLBACK", None)
                raise

    @override
    def time(self, value: datetime) -> str:
        return value.astimezone(UTC).strftime(SQLITE_TIME_FORMAT)

    @override
    def json(self, value: Any) -> str | None:
        return None if value is None else json.dumps(value)


# --- PostgreSQL -----------------------------------------------------------------------------


class _PostgresSession(Session):
    def __init__(self, conn: Any) -> None:
        self.conn = conn

    @override
    async def fetch(self, sql: str, params: Params = None) -> list[Row]:
        cur = await self.conn.execute(_pyformat(sql), params)
        return list(await cur.fetchall()) if cur.description else []

    @override
    async def execute(self, sql: str, params: Params = None) -> int:
        cur = await self.conn.execute(_pyformat(sql), params)
        return int(cur.rowcount)

    @override
    async def executemany(self, sql: str, rows: Iterable[Mapping[str, Any]]) -> int:
        async with self.conn.cursor() as cur:
            await cur.executemany(_pyformat(sql), list(rows))
            return cur.rowcount


class PostgresDatabase(Database):
    """keel's tables in PostgreSQL, on the checkpointer's connection pool."""

    dialect: Literal["sqlite", "postgresql"] = "postgresql"
    fold = "lower"  # Unicode-aware in a UTF-8 database
    unflushed = "(SELECT set_config('synchronous_commit', 'off', true)) AS unflushed"

    def __init__(self, pool: AsyncConnectionPool) -> None:
        """Borrow connections from ``pool`` (autocommit, dict rows) one statement at a time."""
        self.pool = pool

    @override
    async def fetch(self, sql: str, params: Params = None) -> list[Row]:
        async with self.pool.connection() as conn:
            return await _PostgresSession(conn).fetch(sql, params)

    @override
    async def execute(self, sql: str, params: Params = None) -> int:
        async with self.pool.connection() as conn:
            return await _PostgresSession(conn).execute(sql, params)

    @override
    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Session]:
        async with self.pool.connection() as conn, conn.transaction():
            yield _PostgresSession(conn)

    @override
    def time(self, value: datetime) -> datetime:
        return value

    @override
    def json(self, value: Any) -> Json | None:
        return None if value is None else Json(value)
