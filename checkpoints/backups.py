"""Backups of a conversation's latest checkpoint, taken before a resume opens a fresh window.

``BackupStore.backup`` copies the newest checkpoint of a thread under a backup thread id
(``backup:<conversation>:<checkpoint>``), records it in ``keel_backups`` and keeps only the newest
``keep`` (default 10) per conversation. Restoring is reading that thread like any other.
"""

from __future__ import annotations

from langgraph.checkpoint.base import BaseCheckpointSaver

from keel.checkpoints.clock import Clock, utcnow
from keel.checkpoints.database import Database

DEFAULT_KEEP_BACKUPS = 10


class BackupFailed(RuntimeError):
    """The checkpoint could not be copied."""


class BackupStore:
    """Copy checkpoints aside and keep the newest few."""

    def __init__(
        self,
        saver: BaseCheckpointSaver | None,
        db: Database,
        keep: int = DEFAULT_KEEP_BACKUPS,
        clock: Clock = utcnow,
    ) -> None:
        """Copy with ``saver`` (or the one given to ``backup``), record in ``db``'s app tables."""
        self.saver, self.db, self.keep, self.clock = saver, db, keep, clock

    async def backup(
        self, conversation_id: str, reason: str, saver: BaseCheckpointSaver | None = None
    ) -> str:
        """Copy the conversation's newest checkpoint with ``saver``; return the backup id.

        ``saver`` is the checkpointer the graph runs with (a LangGraph server brings its own).
        """
        saver = saver or self.saver
        if saver is None:
            raise BackupFailed("no checkpointer to copy the conversation with")
        source = {"configurable": {"thread_id": conversation_id, "checkpoint_ns": ""}}
        found = await saver.aget_tuple(source)  # type: ignore[arg-type]
        if found is None:
            raise BackupFailed(f"conversation {conversation_id} has no checkpoint to back up")
        checkpoint = found.checkpoint
        backup_id = f"backup:{conversation_id}:{checkpoint['id']}"
        target = {"configurable": {"thread_id": backup_id, "checkpoint_ns": ""}}
        await saver.aput(
            target,  # type: ignore[arg-type]
            checkpoint,
            found.metadata,
            dict(checkpoint["channel_versions"]),
        )
        await self.db.execute(
            "INSERT INTO keel_backups (backup_id, conversation_id, checkpoint_id, reason, "
            "created_at) VALUES (:b, :c, :cp, :reason, :at) ON CONFLICT (backup_id) DO NOTHING",
            {
                "b": backup_id,
                "c": conversation_id,
                "cp": checkpoint["id"],
                "reason": reason,
                "at": self.db.time(self.clock()),
            },
        )
        await self._trim(saver, conversation_id)
        return backup_id

    async def list(self, conversation_id: str) -> list[str]:
        """Backup ids of the conversation, newest first."""
        rows = await self.db.fetch(
            "SELECT backup_id FROM keel_backups WHERE conversation_id = :c "
            "ORDER BY created_at DESC, backup_id DESC",
            {"c": conversation_id},
        )
        return [r["backup_id"] for r in rows]

    async def _trim(self, saver: BaseCheckpointSaver, conversation_id: str) -> None:
        for old in (await self.list(conversation_id))[self.keep :]:
            await saver.adelete_thread(old)
            await self.db.execute("DELETE FROM keel_backups WHERE backup_id = :b", {"b": old})
