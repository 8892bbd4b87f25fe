"""Who owns which conversation: the ``keel_conversations`` table.

A conversation id is a UUIDv4 that belongs to exactly one user. Callers (the CLI, the API) create
conversations here and check ownership before running a turn; another user's id reads as unknown.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine

from checkpoints.schema import conversations


class ConversationNotFound(LookupError):
    """No conversation with this id belongs to this user."""

    code = "conversation_not_found"

    def __init__(self, conversation_id: str) -> None:
        """Name the id that was asked for."""
        super().__init__(f"conversation {conversation_id} not found")


class ConversationStore:
    """Create conversations and check who they belong to."""

    def __init__(self, engine: AsyncEngine) -> None:
        """Work on the app tables of ``engine``."""
        self.engine = engine

    async def create(self, user_id: str, conversation_id: str | None = None) -> dict[str, str]:
        """Create a conversation for ``user_id`` (a new UUIDv4 unless one is given)."""
        cid = conversation_id or str(uuid.uuid4())
        now = datetime.now(UTC)
        async with self.engine.begin() as conn:
            await conn.execute(
                conversations.insert().values(id=cid, user_id=user_id, created_at=now)
            )
        return {"conversation_id": cid, "created_at": now.isoformat()}

    async def owner(self, conversation_id: str) -> str | None:
        """The user who owns ``conversation_id``, or None when there is no such conversation."""
        async with self.engine.connect() as conn:
            row = await conn.execute(
                sa.select(conversations.c.user_id).where(conversations.c.id == conversation_id)
            )
            return row.scalar_one_or_none()

    async def require(self, conversation_id: str, user_id: str) -> None:
        """Raise ConversationNotFound unless ``user_id`` owns ``conversation_id``."""
        if await self.owner(conversation_id) != user_id:
            raise ConversationNotFound(conversation_id)
