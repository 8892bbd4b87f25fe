"""Messages sent with an idempotency key: the ``keel_requests`` table.

A client that may retry a message (after a timeout, a 503, a dropped stream) sends it with a key
of its own; the row remembers the key with a digest of the content, and the turn's result once the
turn ends. A retry finds the row and is answered from it instead of running the message again.
Rows live for ``KEPT_FOR`` (a day, as payment APIs keep theirs) and go with their conversation.
Used by ``keel.graphs.run_turn``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import timedelta

from keel.checkpoints.clock import Clock, utcnow
from keel.checkpoints.database import Database

KEPT_FOR = timedelta(days=1)


def digest(content: str) -> str:
    """The SHA-256 of a message's text, as hex."""
    return hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class Request:
    """A keyed message: its content's digest and, once the turn ended, its result (JSON)."""

    content_sha256: str
    result: str | None


class RequestStore:
    """Remember keyed messages per conversation."""

    def __init__(self, db: Database, clock: Clock = utcnow) -> None:
        """Work on the app tables of ``db``, stamping rows with ``clock``."""
        self.db = db
        self.clock = clock

    async def get(self, conversation_id: str, key: str) -> Request | None:
        """The message sent with ``key`` on the conversation, if one was."""
        row = await self.db.fetchone(
            "SELECT content_sha256, result FROM keel_requests "
            "WHERE conversation_id = :c AND request_key = :k",
            {"c": conversation_id, "k": key},
        )
        return Request(row["content_sha256"], row["result"]) if row else None

    async def start(self, conversation_id: str, key: str, content: str) -> None:
        """Note that the message sent with ``key`` is being run (and forget expired keys)."""
        now = self.clock()
        params = {
            "c": conversation_id,
            "k": key,
            "d": digest(content),
            "now": self.db.time(now),
            "expired": self.db.time(now - KEPT_FOR),
        }
        async with self.db.transaction() as tx:
            await tx.execute(
                "DELETE FROM keel_requests WHERE conversation_id = :c AND created_at < :expired",
                params,
            )
            await tx.execute(
                "INSERT INTO keel_requests (conversation_id, request_key, content_sha256, "
                "created_at) VALUES (:c, :k, :d, :now) ON CONFLICT DO NOTHING",
                params,
            )

    async def settle(self, conversation_id: str, key: str, result: str) -> None:
        """Keep ``result`` for the message sent with ``key``, unless one is kept already.

        For a turn finished or read back after its process died: its first outcome stands.
        """
        await self.db.execute(
            "UPDATE keel_requests SET result = :r "
            "WHERE conversation_id = :c AND request_key = :k AND result IS NULL",
            {"c": conversation_id, "k": key, "r": result},
        )

    async def finish(self, conversation_id: str, key: str, result: str) -> None:
        """Keep the result of the message sent with ``key``."""
        await self.db.execute(
            "UPDATE keel_requests SET result = :r WHERE conversation_id = :c AND request_key = :k",
            {"c": conversation_id, "k": key, "r": result},
        )
