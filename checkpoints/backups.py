"""Backups of a conversation's latest checkpoint, taken before a resume opens a fresh window.

``BackupStore.backup`` copies the newest checkpoint of a thread under a backup thread id
(``backup:<conversation>:<checkpoint>``), records it in ``keel_backups`` and keeps only the newest
``keep`` (default 10) per conversation. Restoring is reading that thread like any other.
"""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa
from langgraph.checkpoint.base import BaseCheckpointSaver
from sqlalchemy.ext.asyncio import AsyncEngine

from checkpoints.schema import backups

DEFAULT_KEEP_BACKUPS = 10


class BackupFailed(RuntimeError):
    """The checkpoint could not be copied."""


class BackupStore:
    """Copy checkpoints aside and keep the newest few."""

    def __init__(
        self, saver: BaseCheckpointSaver, engine: AsyncEngine, keep: int = DEFAULT_KEEP_BACKUPS
    ) -> None:
        """Copy with ``saver``, record in ``engine``'s app tables."""
        self.saver, self.engine, self.keep = saver, engine, keep

    async def backup(self, conversation_id: str, reason: str) -> str:
        """Copy the conversation's newest checkpoint; return the backup id."""
        source = {"configurable": {"thread_id": conversation_id, "checkpoint_ns": ""}}
        found = await self.saver.aget_tuple(source)  # type: ignore[arg-type]
        if found is None:
            raise BackupFailed(f"conversation {conversation_id} has no checkpoint to back up")
        checkpoint = found.checkpoint
        backup_id = f"backup:{conversation_id}:{checkpoint['id']}"
        target = {"configurable": {"thread_id": backup_id, "checkpoint_ns": ""}}
        await self.saver.aput(
            target,  # type: ignore[arg-type]
            checkpoint,
            found.metadata,
            dict(checkpoint["channel_versions"]),
        )
        async with self.engine.begin() as conn:
            await conn.execute(
                backups.insert().values(
                    backup_id=backup_id,
                    conversation_id=conversation_id,
                    checkpoint_id=checkpoint["id"],
                    reason=reason,
                    created_at=datetime.now(UTC),
                )
            )
        await self._trim(conversation_id)
        return backup_id

    async def list(self, conversation_id: str) -> list[str]:
        """Backup ids of the conversation, newest first."""
        async with self.engine.connect() as conn:
            rows = await conn.execute(
                sa.select(backups.c.backup_id)
                .where(backups.c.conversation_id == conversation_id)
                .order_by(backups.c.created_at.desc(), backups.c.backup_id.desc())
            )
            return [r.backup_id for r in rows]

    async def _trim(self, conversation_id: str) -> None:
        for old in (await self.list(conversation_id))[self.keep :]:
            await self.saver.adelete_thread(old)
            async with self.engine.begin() as conn:
                await conn.execute(backups.delete().where(backups.c.backup_id == old))
