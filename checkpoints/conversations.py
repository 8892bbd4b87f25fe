"""Who owns which conversation: the ``keel_conversations`` table.

A conversation id is a UUIDv4 that belongs to exactly one user, for good: ownership never changes,
so once read it is remembered in the process (a bounded cache) and later checks cost no query.
Callers (the CLI, the API) create conversations here and check ownership before running a turn;
another user's id reads as unknown.
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from datetime import UTC, datetime

from keel.checkpoints.database import Database

OWNERS_CACHED = 10_000


class ConversationNotFound(LookupError):
    """No conversation with this id belongs to this user."""

    code = "conversation_not_found"

    def __init__(self, conversation_id: str) -> None:
        """Name the id that was asked for."""
        super().__init__(f"conversation {conversation_id} not found")


class ConversationStore:
    """Create conversations and check who they belong to."""

    def __init__(self, db: Database) -> None:
        """Work on the app tables of ``db``."""
        self.db = db
        self._owners: OrderedDict[str, str] = OrderedDict()

    def _remember(self, conversation_id: str, user_id: str) -> None:
        self._owners[conversation_id] = user_id
        self._owners.move_to_end(conversation_id)
        if len(self._owners) > OWNERS_CACHED:
            self._owners.popitem(last=False)

    async def create(self, user_id: str, conversation_id: str | None = None) -> dict[str, str]:
        """Create a conversation for ``user_id`` (a new UUIDv4 unless one is given)."""
        cid = conversation_id or str(uuid.uuid4())
        now = datetime.now(UTC)
        await self.db.execute(
            "INSERT INTO keel_conversations (id, user_id, created_at) VALUES (:id, :user, :at)",
            {"id": cid, "user": user_id, "at": self.db.time(now)},
        )
        self._remember(cid, user_id)
        return {"conversation_id": cid, "created_at": now.isoformat()}

    async def owner(self, conversation_id: str) -> str | None:
        """The user who owns ``conversation_id``, or None when there is no such conversation."""
        if (known := self._owners.get(conversation_id)) is not None:
            return known
        row = await self.db.fetchone(
            "SELECT user_id FROM keel_conversations WHERE id = :id", {"id": conversation_id}
        )
        if row is None:
            return None
        self._remember(conversation_id, row["user_id"])
        return str(row["user_id"])

    async def require(self, conversation_id: str, user_id: str) -> None:
        """Raise ConversationNotFound unless ``user_id`` owns ``conversation_id``."""
        if await self.owner(conversation_id) != user_id:
            raise ConversationNotFound(conversation_id)
