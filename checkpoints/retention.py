"""Checkpoint retention: keep the last N checkpoints of a conversation, drop the rest.

keel keeps its message log outside graph state, so old checkpoints hold nothing that is not
elsewhere; ``prune_thread`` removes all but the newest ``keep`` (with their pending writes, and on
PostgreSQL and in memory the channel blobs no kept checkpoint refers to). The turn runner prunes
after every turn (``keel chat``), or ``Retention`` does it in the background every few turns (the
API), which keeps the stored bytes per conversation bounded; ``keel db prune`` runs it over every
thread. The message log and the tasks are never touched.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import structlog
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from psycopg_pool import AsyncConnectionPool

from keel.checkpoints.database import Database

log = structlog.get_logger(__name__)

DEFAULT_KEEP = 50
PRUNE_EVERY = 10
"""Turns of a conversation between two background prunes (so at most keep + ~30 are kept)."""

_SQLITE = [
    "DELETE FROM {table} WHERE thread_id = ? AND checkpoint_id < (SELECT checkpoint_id FROM "
    "checkpoints WHERE thread_id = ? AND checkpoint_ns = '' ORDER BY checkpoint_id DESC "
    "LIMIT 1 OFFSET ?)"
]
_POSTGRES_CUTOFF = (
    "SELECT checkpoint_id FROM checkpoints WHERE thread_id = %s AND checkpoint_ns = '' "
    "ORDER BY checkpoint_id DESC LIMIT 1 OFFSET %s"
)
_POSTGRES = [
    "DELETE FROM checkpoint_writes WHERE thread_id = %s AND checkpoint_id < %s",
    "DELETE FROM checkpoints WHERE thread_id = %s AND checkpoint_id < %s",
]
_POSTGRES_BLOBS = (
    "DELETE FROM checkpoint_blobs b WHERE b.thread_id = %s AND b.checkpoint_ns = '' "
    "AND (b.channel, b.version) NOT IN (SELECT kv.key, kv.value FROM checkpoints c, "
    "jsonb_each_text(c.checkpoint -> 'channel_versions') kv "
    "WHERE c.thread_id = %s AND c.checkpoint_ns = '')"
)
"""Blobs no kept checkpoint refers to: the referenced (channel, version) pairs are collected once
(a hashed set), not searched for per blob, so a prune costs a few milliseconds, not hundreds."""


async def _prune_sqlite(saver: AsyncSqliteSaver, thread_id: str, keep: int) -> None:
    async with saver.lock:
        for table in ("writes", "checkpoints"):
            await saver.conn.execute(
                _SQLITE[0].format(table=table), (thread_id, thread_id, keep - 1)
            )
        await saver.conn.commit()


@asynccontextmanager
async def _postgres_cursor(saver: AsyncPostgresSaver) -> AsyncIterator[Any]:
    """A cursor in a transaction of its own: from the pool when the saver has one.

    Not the saver's own ``_cursor``, which holds the saver's lock (every checkpoint read and write
    of the process waits behind it) for as long as the prune takes.
    """
    if isinstance(saver.conn, AsyncConnectionPool):
        async with saver.conn.connection() as conn, conn.transaction(), conn.cursor() as cur:
            yield cur
    else:
        async with saver._cursor() as cur:
            yield cur


async def _prune_postgres(saver: AsyncPostgresSaver, thread_id: str, keep: int) -> None:
    async with _postgres_cursor(saver) as cur:
        await cur.execute(_POSTGRES_CUTOFF, (thread_id, keep - 1))
        row: Any = await cur.fetchone()
        if row is None:
            return
        cutoff = row["checkpoint_id"]
        for sql in _POSTGRES:
            await cur.execute(sql, (thread_id, cutoff))
        await cur.execute(_POSTGRES_BLOBS, (thread_id, thread_id))


_VERSIONS: weakref.WeakKeyDictionary[InMemorySaver, dict[str, set[tuple[str, Any]]]] = (
    weakref.WeakKeyDictionary()
)
"""Channel versions each in-memory checkpoint refers to, read once per checkpoint."""


def _prune_memory(saver: InMemorySaver, thread_id: str, keep: int) -> None:
    known = _VERSIONS.setdefault(saver, {})
    for ns, checkpoints in saver.storage.get(thread_id, {}).items():
        ordered = sorted(checkpoints)
        if len(ordered) <= keep:
            continue
        for checkpoint_id in ordered[:-keep]:
            del checkpoints[checkpoint_id]
            known.pop(checkpoint_id, None)
            saver.writes.pop((thread_id, ns, checkpoint_id), None)
        used: set[tuple[str, Any]] = set()
        for checkpoint_id, (serialized, _meta, _parent) in checkpoints.items():
            if checkpoint_id not in known:
                versions = saver.serde.loads_typed(serialized)["channel_versions"]
                known[checkpoint_id] = set(versions.items())
            used |= known[checkpoint_id]
        for key in [k for k in saver.blobs if k[0] == thread_id and k[1] == ns]:
            if (key[2], key[3]) not in used:
                del saver.blobs[key]


_LATEST = (
    "SELECT checkpoint_id FROM checkpoints WHERE thread_id = :t AND checkpoint_ns = '' "
    "ORDER BY checkpoint_id DESC LIMIT 1"
)


async def latest_checkpoint_id(
    saver: BaseCheckpointSaver, db: Database, thread_id: str
) -> str | None:
    """The id of the thread's newest checkpoint: one index lookup, nothing deserialised.

    ``db`` is keel's tables in the same database as the saver's (SQLite, PostgreSQL).
    """
    if isinstance(saver, InMemorySaver):
        ids = saver.storage.get(thread_id, {}).get("", {})
        return max(ids) if ids else None
    row = await db.fetchone(_LATEST, {"t": thread_id})
    return str(row["checkpoint_id"]) if row else None


async def thread_ids(saver: BaseCheckpointSaver) -> list[str]:
    """Every thread the saver holds checkpoints for."""
    if isinstance(saver, AsyncSqliteSaver):
        async with (
            saver.lock,
            saver.conn.execute("SELECT DISTINCT thread_id FROM checkpoints") as cur,
        ):
            return [str(r[0]) for r in await cur.fetchall()]
    if isinstance(saver, AsyncPostgresSaver):
        async with saver._cursor() as cur:
            await cur.execute("SELECT DISTINCT thread_id FROM checkpoints")
            return [str(r["thread_id"]) for r in await cur.fetchall()]
    if isinstance(saver, InMemorySaver):
        return list(saver.storage)
    return []


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
    if isinstance(saver, AsyncSqliteSaver):
        await _prune_sqlite(saver, thread_id, keep)
    elif isinstance(saver, AsyncPostgresSaver):
        await _prune_postgres(saver, thread_id, keep)
    elif isinstance(saver, InMemorySaver):
        _prune_memory(saver, thread_id, keep)


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
