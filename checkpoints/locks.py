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

Given the user a turn is for, ``hold`` also reads, once the lock is held, what the turn needs of
the conversation (``Found``): its owner, checked to be that user (``ConversationNotFound``
otherwise: a conversation deleted by any process is gone for every later turn at once, and
nothing is written to it) and its newest checkpoint. On PostgreSQL they are read in the
statement that takes the lock, so the read costs no round trip; elsewhere in one statement after
it.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import structlog

from keel.checkpoints.conversation_store import ConversationNotFound, ConversationStore
from keel.checkpoints.process_locks import Found, ProcessLocks, take

log = structlog.get_logger(__name__)


class ConversationLocked(RuntimeError):
    """Another turn holds the conversation."""


def lock_key(conversation_id: str) -> int:
    """A stable signed 64-bit key for the conversation."""
    digest = hashlib.blake2b(conversation_id.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


class TurnLocks:
    """The per-conversation turn lock of one process."""

    def __init__(
        self, process_locks: ProcessLocks, owners: ConversationStore | None = None
    ) -> None:
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
    ) -> AsyncIterator[str | None]:
        """Hold the conversation for one turn; wait up to ``wait`` seconds for it.

        With ``user``: the conversation must exist and be theirs (``ConversationNotFound``, which
        also comes before ``ConversationLocked``: a request for a deleted conversation is told so,
        not to retry), and the holder is given its newest checkpoint's id, read on the way (None:
        it has none, or the checkpoints are not in the tables read, the in-memory saver's).
        """
        deadline = time.monotonic() + wait
        key = lock_key(conversation_id)
        held = False
        try:
            async with self._local_lock(conversation_id, deadline):
                asked = conversation_id if user is not None else None
                taken, found = await take(self.process_locks, key, deadline, asked)
                if not taken:
                    raise ConversationLocked(conversation_id)
                try:
                    if user is not None:
                        found = await self._check(conversation_id, user, found)
                    held = True
                    yield found.newest if found is not None and found.newest_read else None
                finally:
                    await asyncio.shield(self.process_locks.let_go(key))
        except ConversationLocked:
            if user is not None and not held:
                await self._check(conversation_id, user, None)
            raise

    async def _check(self, conversation_id: str, user: str, found: Found | None) -> Found:
        """What was found (read now if the lock did not), unless ``user`` does not own the
        conversation: then ConversationNotFound.
        """  # noqa: D205
        assert self.owners is not None, "a user's turn needs the owners to check"
        if found is None:
            found = await self.owners.read_found(conversation_id)
        else:
            self.owners.noted(conversation_id, found.owner)
        if found.owner != user:
            raise ConversationNotFound(conversation_id)
        return found

    async def close(self) -> None:
        """Drop the cross-process locks."""
        await self.process_locks.close()


def _loop_time(deadline: float) -> float:
    """A ``time.monotonic`` deadline on the running loop's clock."""
    return asyncio.get_running_loop().time() + max(0.0, deadline - time.monotonic())
