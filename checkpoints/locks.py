"""One turn at a time per conversation, across processes: a lock held in the database.

PostgreSQL: a session-level advisory lock on a connection held for the turn (released by
``pg_advisory_unlock``, or by PostgreSQL itself if the process dies). SQLite: a lease row in
``keel_locks`` (insert-if-absent; a lease older than ``LEASE_SECONDS`` counts as abandoned).
``hold(conversation_id, wait)`` raises ``ConversationLocked`` when the lock cannot be had in time.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from sqlalchemy.dialects import sqlite
from sqlalchemy.ext.asyncio import AsyncEngine

from checkpoints.schema import locks

LEASE_SECONDS = 600
POLL_SECONDS = 0.05


class ConversationLocked(RuntimeError):
    """Another turn holds the conversation."""


def advisory_key(conversation_id: str) -> int:
    """A stable signed 64-bit key for ``pg_advisory_lock``."""
    digest = hashlib.blake2b(conversation_id.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


class TurnLock:
    """The per-conversation turn lock."""

    def __init__(self, engine: AsyncEngine) -> None:
        """Lock through ``engine``'s database."""
        self.engine = engine

    @asynccontextmanager
    async def hold(self, conversation_id: str, wait: float = 0.0) -> AsyncIterator[None]:
        """Hold the conversation for one turn; wait up to ``wait`` seconds for it."""
        if self.engine.dialect.name == "postgresql":
            async with self._advisory(conversation_id, wait):
                yield
        else:
            async with self._lease(conversation_id, wait):
                yield

    @asynccontextmanager
    async def _advisory(self, conversation_id: str, wait: float) -> AsyncIterator[None]:
        key = {"k": advisory_key(conversation_id)}
        deadline = time.monotonic() + wait
        async with self.engine.connect() as conn:
            while not (
                await conn.execute(sa.text("SELECT pg_try_advisory_lock(:k)"), key)
            ).scalar():
                await conn.rollback()
                if time.monotonic() >= deadline:
                    raise ConversationLocked(conversation_id)
                await asyncio.sleep(POLL_SECONDS)
            await conn.commit()
            try:
                yield
            finally:
                await conn.execute(sa.text("SELECT pg_advisory_unlock(:k)"), key)
                await conn.commit()

    async def _try_lease(self, conversation_id: str, holder: str) -> bool:
        now = datetime.now(UTC)
        async with self.engine.begin() as conn:
            await conn.execute(
                locks.delete().where(
                    locks.c.conversation_id == conversation_id, locks.c.expires_at < now
                )
            )
            inserted = await conn.execute(
                sqlite.insert(locks)
                .values(
                    conversation_id=conversation_id,
                    holder=holder,
                    expires_at=now + timedelta(seconds=LEASE_SECONDS),
                )
                .on_conflict_do_nothing()
            )
            return inserted.rowcount == 1

    @asynccontextmanager
    async def _lease(self, conversation_id: str, wait: float) -> AsyncIterator[None]:
        holder = uuid.uuid4().hex
        deadline = time.monotonic() + wait
        while not await self._try_lease(conversation_id, holder):
            if time.monotonic() >= deadline:
                raise ConversationLocked(conversation_id)
            await asyncio.sleep(POLL_SECONDS)
        try:
            yield
        finally:
            async with self.engine.begin() as conn:
                await conn.execute(
                    locks.delete().where(
                        locks.c.conversation_id == conversation_id, locks.c.holder == holder
                    )
                )
