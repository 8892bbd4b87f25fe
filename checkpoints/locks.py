"""One turn at a time per conversation, in this process and across processes.

``TurnLocks.hold(conversation_id, wait)`` serialises turns in two layers:

- in the process, an ``asyncio.Lock`` per conversation: a second request for a conversation this
  process is already serving is answered (or queued) without touching the database;
- across processes, a lock the operating system or the database drops by itself when its holder
  dies: on PostgreSQL a session-level advisory lock taken on one dedicated connection per process
  (outside the work pool, so holding a turn never keeps a connection the turn needs); on SQLite a
  byte-range lock (``fcntl``) on a file beside the database; in memory, nothing more.

A ``kill -9`` releases both at once, so a restarted server never waits for a dead holder.
``ConversationLocked`` is raised when the lock cannot be had within ``wait`` seconds.

Given the user a turn is for, ``hold`` also checks, once the lock is held, that the conversation
still exists and is theirs (``ConversationNotFound`` otherwise): a conversation deleted by any
process is gone for every later turn at once, and nothing is written to it. On PostgreSQL the
owner is read in the statement that takes the lock, so the check costs no round trip.
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import os
import struct
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Protocol

import psycopg
import structlog
from psycopg.conninfo import make_conninfo

from keel.checkpoints.conversations import ConversationNotFound

log = structlog.get_logger(__name__)

POLL_SECONDS = 0.05
CONNECT_TIMEOUT_SECONDS = 5
STATEMENT_TIMEOUT_MS = 5000
KEEPALIVES = {
    "keepalives": 1,
    "keepalives_idle": 10,
    "keepalives_interval": 5,
    "keepalives_count": 3,
}
"""The lock session is idle between turns: TCP keepalives find a dead peer within ~25 s."""


class ConversationLocked(RuntimeError):
    """Another turn holds the conversation."""


class Owners(Protocol):
    """Who owns a conversation, read from the database now (never from a cache)."""

    async def read_owner(self, conversation_id: str) -> str | None:
        """The owner, or None when there is no such conversation."""
        ...

    def noted(self, conversation_id: str, owner: str | None) -> None:
        """An owner read elsewhere (with the lock), for the store's cache."""
        ...


NOT_READ = "\x00not read"
"""The owner slot of a lock taken without reading the conversation's row."""


def lock_key(conversation_id: str) -> int:
    """A stable signed 64-bit key for the conversation."""
    digest = hashlib.blake2b(conversation_id.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


class ProcessLocks(Protocol):
    """Locks shared with other processes, released by the system when their holder dies."""

    async def try_acquire(self, key: int) -> bool:
        """Take ``key`` if nobody else holds it."""
        ...

    async def try_acquire_reading(self, key: int, conversation_id: str) -> tuple[bool, str | None]:
        """Take ``key`` if nobody holds it, and read the conversation's owner in the same step.

        The owner is ``NOT_READ`` when these locks cannot read it on the way.
        """
        ...

    async def release(self, key: int) -> None:
        """Give ``key`` back."""
        ...

    async def held(self, key: int) -> bool:
        """Another process holds ``key`` (a look that takes nothing)."""
        ...

    async def close(self) -> None:
        """Release everything and close."""
        ...


class NoProcessLocks:
    """Nothing beyond this process (the in-memory backend)."""

    async def try_acquire(self, key: int) -> bool:  # noqa: D102
        return True

    async def try_acquire_reading(self, key: int, conversation_id: str) -> tuple[bool, str | None]:  # noqa: D102
        return True, NOT_READ

    async def release(self, key: int) -> None:  # noqa: D102
        return None

    async def held(self, key: int) -> bool:  # noqa: D102
        return False

    async def close(self) -> None:  # noqa: D102
        return None


FLOCK = "@hhqqi4x"
"""``struct flock`` on 64-bit Linux: type, whence, start, len, pid (F_GETLK fills it in)."""


class FileLocks:
    """Byte-range locks on one file: byte ``key`` of ``path`` stands for a conversation.

    POSIX record locks belong to the process and vanish with it. The file is opened once per
    process and kept open (closing any descriptor of it would drop every lock the process holds).
    """

    def __init__(self, path: Path) -> None:
        """Lock ranges of ``path`` (created if missing)."""
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)

    @staticmethod
    def _offset(key: int) -> int:
        return key & ((1 << 62) - 1)

    async def try_acquire(self, key: int) -> bool:  # noqa: D102
        try:
            fcntl.lockf(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, self._offset(key))
        except (BlockingIOError, PermissionError):
            return False
        return True

    async def try_acquire_reading(self, key: int, conversation_id: str) -> tuple[bool, str | None]:  # noqa: D102
        return await self.try_acquire(key), NOT_READ

    async def release(self, key: int) -> None:  # noqa: D102
        fcntl.lockf(self.fd, fcntl.LOCK_UN, 1, self._offset(key))

    async def held(self, key: int) -> bool:  # noqa: D102
        probe = struct.pack(FLOCK, fcntl.F_WRLCK, os.SEEK_SET, self._offset(key), 1, 0)
        answer = fcntl.fcntl(self.fd, fcntl.F_GETLK, probe)  # the lock in the way, if any
        return struct.unpack(FLOCK, answer)[0] != fcntl.F_UNLCK

    async def close(self) -> None:  # noqa: D102
        os.close(self.fd)


HELD = (
    "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1 "
    "AND granted AND ((classid::bigint << 32) | objid::bigint) = %s::bigint)"
)
"""Whether a session holds the advisory lock of a bigint key (its high and low halves)."""
TAKE_READING = (
    "SELECT pg_try_advisory_lock(%s) AS taken, "
    "(SELECT user_id FROM keel_conversations WHERE id = %s FOR KEY SHARE) AS owner"
)
"""Take a conversation's lock and read its owner at once. The row lock (``FOR KEY SHARE``) reads
the row's newest committed version whatever the statement's snapshot: a delete that committed and
let go of the turn lock just before is seen, whichever of the two the statement evaluates first."""


class AdvisoryLocks:
    """PostgreSQL session advisory locks on one dedicated connection of this process.

    The connection is opened on first use and again after it breaks (the locks it held went with
    it: PostgreSQL released them when the session ended).
    """

    def __init__(self, conninfo: str) -> None:
        """Lock through a connection to ``conninfo``."""
        self.conninfo = conninfo
        self.conn: psycopg.AsyncConnection | None = None
        self.io = asyncio.Lock()
        self._orphans: set[asyncio.Future[None]] = set()

    async def _connection(self) -> psycopg.AsyncConnection:
        if self.conn is None or self.conn.closed:
            self.conn = await psycopg.AsyncConnection.connect(
                make_conninfo(
                    self.conninfo,
                    connect_timeout=CONNECT_TIMEOUT_SECONDS,
                    options=f"-c statement_timeout={STATEMENT_TIMEOUT_MS}",
                    **KEEPALIVES,
                ),
                autocommit=True,
            )
        return self.conn

    async def _scalar(self, sql: str, key: int, retry: bool) -> bool:
        row = await self._row(sql, (key,), retry)
        return bool(row and row[0])

    async def _row(self, sql: str, params: tuple[Any, ...], retry: bool) -> tuple[Any, ...] | None:
        async with self.io:
            for attempt in (1, 2):
                conn = await self._connection()
                try:
                    return await (await conn.execute(sql, params)).fetchone()
                except psycopg.OperationalError:
                    # the session ended (restart, failover, a terminated backend): so did every
                    # lock it held; a fresh session can take locks again
                    log.warning("lock_connection_lost")
                    await conn.close()
                    if not retry or attempt == 2:
                        raise
        raise AssertionError("unreachable")

    async def try_acquire(self, key: int) -> bool:
        """Take ``key``; a lock granted while the caller was cancelled is given back at once."""
        row = await self._taking("SELECT pg_try_advisory_lock(%s)", (key,), key)
        return bool(row and row[0])

    async def try_acquire_reading(self, key: int, conversation_id: str) -> tuple[bool, str | None]:
        """Take ``key`` and read the conversation's owner in one statement."""
        row = await self._taking(TAKE_READING, (key, conversation_id), key)
        return (bool(row[0]), row[1]) if row else (False, None)

    async def _taking(self, sql: str, params: tuple[Any, ...], key: int) -> tuple[Any, ...] | None:
        attempt = asyncio.ensure_future(self._row(sql, params, retry=True))
        try:
            return await asyncio.shield(attempt)
        except asyncio.CancelledError:
            attempt.add_done_callback(lambda done: self._give_back(done, key))
            raise

    def _give_back(self, attempt: asyncio.Future[tuple[Any, ...] | None], key: int) -> None:
        row = None if attempt.cancelled() or attempt.exception() else attempt.result()
        if row and row[0]:
            release = asyncio.ensure_future(self.release(key))
            self._orphans.add(release)  # a reference until it is done, then none
            release.add_done_callback(self._orphans.discard)

    async def release(self, key: int) -> None:  # noqa: D102
        try:
            await self._scalar("SELECT pg_advisory_unlock(%s)", key, retry=False)
        except psycopg.OperationalError:
            pass  # the session is gone, and the lock with it

    async def held(self, key: int) -> bool:  # noqa: D102
        return await self._scalar(HELD, key, retry=True)

    async def close(self) -> None:  # noqa: D102
        if self.conn is not None:
            await self.conn.close()


async def take(
    process_locks: ProcessLocks, key: int, deadline: float, conversation_id: str | None = None
) -> tuple[bool, str | None]:
    """Poll for ``key`` until ``deadline`` (``time.monotonic``): whether it came, and the owner.

    With ``conversation_id`` the conversation's owner is read on the way where the locks can
    (else the owner is ``NOT_READ``). Polled, never waited for inside the database: a waiting
    statement would hold a transaction open for as long as it waits.
    """
    while True:
        owner: str | None = NOT_READ
        if conversation_id is None:
            taken = await process_locks.try_acquire(key)
        else:
            taken, owner = await process_locks.try_acquire_reading(key, conversation_id)
        if taken:
            return True, owner
        if time.monotonic() >= deadline:
            return False, None
        await asyncio.sleep(POLL_SECONDS)


class TurnLocks:
    """The per-conversation turn lock of one process."""

    def __init__(self, process_locks: ProcessLocks, owners: Owners | None = None) -> None:
        """Serialise in this process, and across processes through ``process_locks``.

        ``owners`` answers who owns a conversation when the locks cannot read it themselves.
        """
        self.process_locks = process_locks
        self.owners = owners
        self._local: dict[str, asyncio.Lock] = {}
        self._users: dict[str, int] = {}

    def busy(self, conversation_id: str) -> bool:
        """This process is running a turn on the conversation."""
        lock = self._local.get(conversation_id)
        return lock is not None and lock.locked()

    async def running(self, conversation_id: str) -> bool:
        """A turn holds the conversation, in this process or in another one (takes nothing)."""
        if self.busy(conversation_id):
            return True
        return await self.process_locks.held(lock_key(conversation_id))

    @asynccontextmanager
    async def _local_lock(self, conversation_id: str, deadline: float) -> AsyncIterator[None]:
        lock = self._local.setdefault(conversation_id, asyncio.Lock())
        self._users[conversation_id] = self._users.get(conversation_id, 0) + 1
        try:
            if lock.locked() and deadline <= time.monotonic():
                raise ConversationLocked(conversation_id)
            try:
                async with asyncio.timeout_at(_loop_time(deadline)):
                    await lock.acquire()
            except TimeoutError:
                raise ConversationLocked(conversation_id) from None
            try:
                yield
            finally:
                lock.release()
        finally:
            self._users[conversation_id] -= 1
            if not self._users[conversation_id]:
                del self._users[conversation_id], self._local[conversation_id]

    @asynccontextmanager
    async def hold(
        self, conversation_id: str, wait: float = 0.0, user: str | None = None
    ) -> AsyncIterator[None]:
        """Hold the conversation for one turn; wait up to ``wait`` seconds for it.

        With ``user``: the conversation must exist and be theirs (``ConversationNotFound``, which
        also comes before ``ConversationLocked``: a request for a deleted conversation is told so,
        not to retry).
        """
        deadline = time.monotonic() + wait
        key = lock_key(conversation_id)
        held = False
        try:
            async with self._local_lock(conversation_id, deadline):
                asked = conversation_id if user is not None else None
                taken, owner = await take(self.process_locks, key, deadline, asked)
                if not taken:
                    raise ConversationLocked(conversation_id)
                try:
                    if user is not None:
                        await self._check(conversation_id, user, owner)
                    held = True
                    yield
                finally:
                    await asyncio.shield(self.process_locks.release(key))
        except ConversationLocked:
            if user is not None and not held:
                await self._check(conversation_id, user, NOT_READ)
            raise

    async def _check(self, conversation_id: str, user: str, owner: str | None) -> None:
        """ConversationNotFound unless ``user`` owns the conversation (``owner``: as read)."""
        assert self.owners is not None, "a user's turn needs the owners to check"
        if owner == NOT_READ:
            owner = await self.owners.read_owner(conversation_id)
        else:
            self.owners.noted(conversation_id, owner)
        if owner != user:
            raise ConversationNotFound(conversation_id)

    async def close(self) -> None:
        """Drop the cross-process locks."""
        await self.process_locks.close()


def _loop_time(deadline: float) -> float:
    """A ``time.monotonic`` deadline on the running loop's clock."""
    return asyncio.get_running_loop().time() + max(0.0, deadline - time.monotonic())
