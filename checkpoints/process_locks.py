"""Locks that hold a conversation across processes, dropped by the system when their holder dies.

On PostgreSQL a session-level advisory lock taken on one dedicated connection per process (outside
the work pool, so holding a turn never keeps a connection the turn needs), which reads what a turn
needs of the conversation in the same round trip (``Found``); on SQLite a byte-range lock
(``fcntl``) on a file beside the database; in memory, nothing more. ``take`` polls one of them
until a deadline. ``keel.checkpoints.locks`` builds the turn lock on them.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import struct
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import psycopg
import structlog
from psycopg.conninfo import make_conninfo

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


@dataclass(frozen=True)
class Found:
    """What a turn reads of its conversation as it takes the lock, after the lock is held."""

    owner: str | None
    """The conversation's owner (None: there is no such conversation)."""
    newest: str | None = None
    """The conversation's newest checkpoint (None: it has none)."""
    newest_read: bool = True
    """False where the newest checkpoint is not in the tables read (the in-memory saver)."""


class ProcessLocks(Protocol):
    """Locks shared with other processes, released by the system when their holder dies."""

    async def try_acquire(self, key: int) -> bool:
        """Take ``key`` if nobody else holds it."""
        ...

    async def try_acquire_reading(
        self, key: int, conversation_id: str
    ) -> tuple[bool, Found | None]:
        """Take ``key`` if nobody holds it, and read the conversation in the same step.

        None instead of what was found when these locks cannot read it on the way.
        """
        ...

    async def release(self, key: int) -> None:
        """Give ``key`` back."""
        ...

    async def let_go(self, key: int) -> None:
        """Give ``key`` back, returning as soon as nothing in this process can be the worse for
        waiting (a turn's answer does not wait for the database to hear of it).
        """  # noqa: D205
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

    async def try_acquire_reading(  # noqa: D102
        self, key: int, conversation_id: str
    ) -> tuple[bool, Found | None]:
        return True, None

    async def release(self, key: int) -> None:  # noqa: D102
        return None

    async def let_go(self, key: int) -> None:  # noqa: D102
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

    async def try_acquire_reading(  # noqa: D102
        self, key: int, conversation_id: str
    ) -> tuple[bool, Found | None]:
        return await self.try_acquire(key), None

    async def release(self, key: int) -> None:  # noqa: D102
        fcntl.lockf(self.fd, fcntl.LOCK_UN, 1, self._offset(key))

    async def let_go(self, key: int) -> None:  # noqa: D102
        await self.release(key)  # at once: a process's byte-range locks do not stack

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
TAKE_READING = "SELECT taken, owner, newest FROM keel_take_turn(%s, %s)"
"""Take a conversation's lock and, once it is held, read its owner and its newest checkpoint (the
function of migration 0015): each read is a statement of its own in a volatile function, so it
sees everything committed before the lock was had - a delete, the checkpoint of the turn that just
let go of the lock."""


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

    async def try_acquire_reading(
        self, key: int, conversation_id: str
    ) -> tuple[bool, Found | None]:
        """Take ``key`` and read the conversation in one statement."""
        row = await self._taking(TAKE_READING, (key, conversation_id), key)
        if not row or not row[0]:
            return False, None
        return True, Found(row[1], row[2])

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
            self._release_soon(key)

    def _release_soon(self, key: int) -> None:
        release = asyncio.ensure_future(self.release(key))
        self._orphans.add(release)  # a reference until it is done, then none
        release.add_done_callback(self._orphans.discard)

    async def release(self, key: int) -> None:  # noqa: D102
        try:
            await self._scalar("SELECT pg_advisory_unlock(%s)", key, retry=False)
        except psycopg.OperationalError:
            pass  # the session is gone, and the lock with it

    async def let_go(self, key: int) -> None:
        """Queue the unlock on the lock session and return.

        Statements on the session run in order, and a session's advisory locks stack: a turn of
        this process that takes the key again before the unlock ran holds it all the same.
        """
        self._release_soon(key)

    async def held(self, key: int) -> bool:  # noqa: D102
        return await self._scalar(HELD, key, retry=True)

    async def close(self) -> None:  # noqa: D102
        if self._orphans:
            await asyncio.wait(self._orphans, timeout=CONNECT_TIMEOUT_SECONDS)
        if self.conn is not None:
            await self.conn.close()


async def take(
    process_locks: ProcessLocks, key: int, deadline: float, conversation_id: str | None = None
) -> tuple[bool, Found | None]:
    """Poll for ``key`` until ``deadline`` (``time.monotonic``): whether it came, what was found.

    With ``conversation_id`` the conversation is read on the way where the locks can (else what
    was found is None). Polled, never waited for inside the database: a waiting statement would
    hold a transaction open for as long as it waits.
    """
    while True:
        found: Found | None = None
        if conversation_id is None:
            taken = await process_locks.try_acquire(key)
        else:
            taken, found = await process_locks.try_acquire_reading(key, conversation_id)
        if taken:
            return True, found
        if time.monotonic() >= deadline:
            return False, None
        await asyncio.sleep(POLL_SECONDS)
