"""The one place that reaches into a LangGraph saver's private storage: pruning, listing, deleting.

The open-source savers cannot drop old checkpoints or list their threads, so keel does it on their
storage directly: ``InMemorySaver``'s dicts, ``LoopSqliteSaver``'s tables and connection,
``AsyncPostgresSaver``'s tables and connection pool. One class per saver kind, each naming the saver
version it was written against; ``internals_of(saver)`` picks the one for a saver. An upgrade that
changes that storage fails ``tests/unit/test_saver_internals.py``: fix the class, not the policy
(``keel.checkpoints.retention``, which never touches a saver's attributes itself).

A channel LangGraph stores as deltas (``messages``: ``keel.nodes.state.reducers.conversation``)
is rebuilt from the newest checkpoint up its parent chain that holds it whole, and the writes
since; a checkpoint's metadata counts the supersteps since that copy
(``counters_since_delta_snapshot``). So a prune keeps, beside the newest ``keep``, the parents
each kept checkpoint is rebuilt from (``rebuilt_from``), on its own branch.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any, Protocol

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from psycopg_pool import AsyncConnectionPool

from keel.checkpoints.database import Database
from keel.checkpoints.sqlite_saver import LoopSqliteSaver


class SaverInternals(Protocol):
    """What retention needs of a saver beyond LangGraph's public API."""

    async def prune(self, thread_id: str, keep: int, upto: str | None = None) -> None:
        """Delete all but the newest ``keep`` (at least 1) checkpoints of ``thread_id``."""
        ...

    async def thread_ids(self) -> list[str]:
        """Every thread the saver holds checkpoints for."""
        ...

    async def latest_checkpoint_id(self, db: Database, thread_id: str) -> str | None:
        """The thread's newest root checkpoint id; ``db``: keel's tables beside the saver's."""
        ...


_LATEST = (
    "SELECT checkpoint_id FROM checkpoints WHERE thread_id = :t AND checkpoint_ns = '' "
    "ORDER BY checkpoint_id DESC LIMIT 1"
)
"""LangGraph's ``checkpoints`` table, read through keel's ``Database`` (one index lookup)."""


def supersteps(metadata: dict[str, Any]) -> int:
    """The parents a read of the checkpoint with ``metadata`` walks back to its delta channels'
    whole copies (0: it holds them, or none is stored as deltas).
    """  # noqa: D205
    counters = metadata.get("counters_since_delta_snapshot") or {}
    return max((int(c[1]) for c in counters.values()), default=0)


def rebuilt_from(
    checkpoints: Sequence[tuple[str, str | None, dict[str, Any]]], cutoff: str
) -> set[str]:
    """Of ``checkpoints`` (id, parent id, metadata), those older than ``cutoff`` that one from
    ``cutoff`` on is rebuilt from: its parents, as many as its supersteps since the copy.
    """  # noqa: D205
    parents = {c: p for c, p, _ in checkpoints}
    needed: set[str] = set()
    for checkpoint_id, _, metadata in checkpoints:
        if checkpoint_id < cutoff:
            continue
        at = checkpoint_id
        for _ in range(supersteps(metadata)):
            parent = parents.get(at)
            if parent is None:
                break
            at = parent
            if at < cutoff:
                needed.add(at)
    return needed


class InCheckpointsTable:
    """A saver whose newest checkpoint keel reads in LangGraph's ``checkpoints`` table."""

    async def latest_checkpoint_id(self, db: Database, thread_id: str) -> str | None:
        """Read the saver's ``checkpoints`` table through ``db`` (keel's, the same database)."""
        row = await db.fetchone(_LATEST, {"t": thread_id})
        return str(row["checkpoint_id"]) if row else None


_VERSIONS: weakref.WeakKeyDictionary[InMemorySaver, dict[str, set[tuple[str, Any]]]] = (
    weakref.WeakKeyDictionary()
)
"""Channel versions each in-memory checkpoint refers to, read once per checkpoint."""


class MemoryInternals:
    """``InMemorySaver`` of langgraph-checkpoint 4.x (written against 4.3.2).

    Its dicts: ``storage[thread][ns][checkpoint_id] = (checkpoint, metadata, parent_id)`` with the
    checkpoint serialised by ``serde`` (its ``channel_versions`` name the blobs it uses),
    ``writes[(thread, ns, checkpoint_id)]`` and ``blobs[(thread, ns, channel, version)]``. A prune
    drops the old checkpoints, their writes and the blobs no kept checkpoint refers to.
    """

    def __init__(self, saver: InMemorySaver) -> None:
        """Work on ``saver``'s dicts."""
        self.saver = saver

    async def prune(self, thread_id: str, keep: int, upto: str | None = None) -> None:
        """Delete all but the newest ``keep`` checkpoints of ``thread_id`` in each namespace (of
        those up to ``upto``, when given: the ones written after it are neither counted nor
        dropped).
        """  # noqa: D205
        saver = self.saver
        known = _VERSIONS.setdefault(saver, {})
        for ns, checkpoints in saver.storage.get(thread_id, {}).items():
            ordered = sorted(c for c in checkpoints if upto is None or c <= upto)
            if len(ordered) <= keep:
                continue
            described = [
                (c, parent, saver.serde.loads_typed(metadata))
                for c, (_, metadata, parent) in checkpoints.items()
            ]
            needed = rebuilt_from(described, ordered[-keep])
            for checkpoint_id in ordered[:-keep]:
                if checkpoint_id in needed:
                    continue
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

    async def thread_ids(self) -> list[str]:
        """Every thread the saver holds checkpoints for."""
        return list(self.saver.storage)

    async def latest_checkpoint_id(self, db: Database, thread_id: str) -> str | None:
        """The greatest checkpoint id of the root namespace (``db`` is not needed)."""
        ids = self.saver.storage.get(thread_id, {}).get("", {})
        return max(ids) if ids else None


_SQLITE_CUTOFF = (
    "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ''{upto} "
    "ORDER BY checkpoint_id DESC LIMIT 1 OFFSET ?"
)
_SQLITE_CHAIN = (
    "SELECT checkpoint_id, parent_checkpoint_id, CAST(metadata AS TEXT) FROM checkpoints "
    "WHERE thread_id = ? AND checkpoint_ns = ''"
)
_SQLITE_PRUNE = (
    "DELETE FROM {table} WHERE thread_id = ? AND checkpoint_id < ? "
    "AND checkpoint_id NOT IN (SELECT value FROM json_each(?))"
)
_UPTO = " AND checkpoint_id <= {mark}"
"""The clause that counts only the checkpoints up to a given one (``upto``)."""


class SqliteInternals(InCheckpointsTable):
    """``SqliteSaver`` of langgraph-checkpoint-sqlite 3.x (written against 3.1.2), as keel runs it.

    Its ``checkpoints`` and ``writes`` tables (keyed by ``thread_id``, ``checkpoint_ns``,
    ``checkpoint_id``; channel values are inside the checkpoint, there is no blob table), its
    sqlite3 connection ``conn``, and ``LoopSqliteSaver.call``, which runs work under its lock.
    """

    def __init__(self, saver: LoopSqliteSaver) -> None:
        """Work on ``saver``'s connection, under its lock."""
        self.saver = saver

    async def prune(self, thread_id: str, keep: int, upto: str | None = None) -> None:
        """Delete the writes and checkpoints older than the ``keep``-th newest root checkpoint
        (of those up to ``upto``, when given).
        """  # noqa: D205
        conn = self.saver.conn

        def prune() -> None:
            clause, marks = (_UPTO.format(mark="?"), (upto,)) if upto else ("", ())
            with conn:  # one transaction
                found = conn.execute(
                    _SQLITE_CUTOFF.format(upto=clause), (thread_id, *marks, keep - 1)
                ).fetchone()
                if found is None:
                    return
                rows = conn.execute(_SQLITE_CHAIN, (thread_id,)).fetchall()
                chain = [(r[0], r[1], json.loads(r[2] or "{}")) for r in rows]
                kept = json.dumps(sorted(rebuilt_from(chain, found[0])))
                for table in ("writes", "checkpoints"):
                    conn.execute(_SQLITE_PRUNE.format(table=table), (thread_id, found[0], kept))

        await self.saver.call(prune)

    async def thread_ids(self) -> list[str]:
        """Every thread the saver holds checkpoints for."""
        conn = self.saver.conn

        def read() -> list[str]:
            return [str(r[0]) for r in conn.execute("SELECT DISTINCT thread_id FROM checkpoints")]

        return await self.saver.call(read)


_POSTGRES_CUTOFF = (
    "SELECT checkpoint_id FROM checkpoints WHERE thread_id = %s AND checkpoint_ns = ''{upto} "
    "ORDER BY checkpoint_id DESC LIMIT 1 OFFSET %s"
)
_POSTGRES_CHAIN = (
    "SELECT checkpoint_id, parent_checkpoint_id, metadata FROM checkpoints "
    "WHERE thread_id = %s AND checkpoint_ns = ''"
)
_POSTGRES_PRUNE = (
    "DELETE FROM checkpoint_writes WHERE thread_id = %s AND checkpoint_id < %s "
    "AND NOT checkpoint_id = ANY(%s)",
    "DELETE FROM checkpoints WHERE thread_id = %s AND checkpoint_id < %s "
    "AND NOT checkpoint_id = ANY(%s)",
)
_POSTGRES_BLOBS = (
    "DELETE FROM checkpoint_blobs b WHERE b.thread_id = %s AND b.checkpoint_ns = '' "
    "AND (b.channel, b.version) NOT IN (SELECT kv.key, kv.value FROM checkpoints c, "
    "jsonb_each_text(c.checkpoint -> 'channel_versions') kv "
    "WHERE c.thread_id = %s AND c.checkpoint_ns = '')"
)
"""Blobs no kept checkpoint refers to: the referenced (channel, version) pairs are collected once
(a hashed set), not searched for per blob, so a prune costs a few milliseconds, not hundreds."""


class PostgresInternals(InCheckpointsTable):
    """``AsyncPostgresSaver`` of langgraph-checkpoint-postgres 3.x (written against 3.2.0).

    Its ``checkpoints`` (channel versions in the ``checkpoint`` JSONB), ``checkpoint_writes`` and
    ``checkpoint_blobs`` tables, its ``conn`` (a psycopg pool or one connection) and ``_cursor``,
    the cursor it takes under its own lock.
    """

    def __init__(self, saver: AsyncPostgresSaver) -> None:
        """Work on ``saver``'s pool (or connection)."""
        self.saver = saver

    async def prune(self, thread_id: str, keep: int, upto: str | None = None) -> None:
        """Delete the writes, checkpoints and then unreferenced blobs, in one transaction (the
        checkpoints older than the ``keep``-th newest of those up to ``upto``, when given).
        """  # noqa: D205
        clause, marks = (_UPTO.format(mark="%s"), (upto,)) if upto else ("", ())
        async with self._cursor() as cur:
            await cur.execute(_POSTGRES_CUTOFF.format(upto=clause), (thread_id, *marks, keep - 1))
            row: Any = await cur.fetchone()
            if row is None:
                return
            cutoff = row["checkpoint_id"]
            await cur.execute(_POSTGRES_CHAIN, (thread_id,))
            chain = [
                (r["checkpoint_id"], r["parent_checkpoint_id"], r["metadata"])
                for r in await cur.fetchall()
            ]
            kept = sorted(rebuilt_from(chain, cutoff))
            for sql in _POSTGRES_PRUNE:
                await cur.execute(sql, (thread_id, cutoff, kept))
            await cur.execute(_POSTGRES_BLOBS, (thread_id, thread_id))

    async def thread_ids(self) -> list[str]:
        """Every thread the saver holds checkpoints for."""
        async with self.saver._cursor() as cur:
            await cur.execute("SELECT DISTINCT thread_id FROM checkpoints")
            return [str(r["thread_id"]) for r in await cur.fetchall()]

    @asynccontextmanager
    async def _cursor(self) -> AsyncIterator[Any]:
        """A cursor in a transaction of its own: from the pool when the saver has one.

        Not the saver's own ``_cursor``, which holds the saver's lock (every checkpoint read and
        write of the process waits behind it) for as long as the prune takes.
        """
        if isinstance(self.saver.conn, AsyncConnectionPool):
            async with (
                self.saver.conn.connection() as conn,
                conn.transaction(),
                conn.cursor() as cur,
            ):
                yield cur
        else:
            async with self.saver._cursor() as cur:
                yield cur


class OtherSaverInternals(InCheckpointsTable):
    """Any other saver: keel knows nothing of its storage, so it prunes and lists nothing."""

    async def prune(self, thread_id: str, keep: int, upto: str | None = None) -> None:
        """Nothing to do."""

    async def thread_ids(self) -> list[str]:
        """No threads known."""
        return []


def internals_of(saver: BaseCheckpointSaver) -> SaverInternals:
    """The internals of ``saver``'s kind (``OtherSaverInternals`` for a saver keel doesn't know)."""
    if isinstance(saver, LoopSqliteSaver):
        return SqliteInternals(saver)
    if isinstance(saver, AsyncPostgresSaver):
        return PostgresInternals(saver)
    if isinstance(saver, InMemorySaver):
        return MemoryInternals(saver)
    return OtherSaverInternals()


def thread_tables(saver: BaseCheckpointSaver | None, dialect: str) -> tuple[str, ...]:
    """The saver's tables with a ``thread_id``, when they live in keel's database of ``dialect``.

    Deleting a thread's rows from them in keel's own transaction deletes the thread; empty when
    the saver keeps its checkpoints elsewhere (in memory, or a saver keel does not know).
    """
    if isinstance(saver, LoopSqliteSaver) and dialect == "sqlite":
        return ("writes", "checkpoints")
    if isinstance(saver, AsyncPostgresSaver) and dialect == "postgresql":
        return ("checkpoint_writes", "checkpoint_blobs", "checkpoints")
    return ()
