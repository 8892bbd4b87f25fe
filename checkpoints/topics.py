"""Topic segments of a conversation: the ``keel_topics`` table.

A conversation has at most one active topic (a partial unique index holds it to that). Starting a
new topic ends the active one (ended_at, summary) in the same transaction, and so does reopening
an earlier one. Starting a topic under an id that already exists changes nothing, so a turn
replayed after a crash opens its topic once. Topics are deleted only with their conversation. Used
by the topic_detect, reset_conversation and reopen_topic nodes and the API.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from keel.checkpoints.clock import Clock, utcnow
from keel.checkpoints.database import Database, Row, Session, read_time

END_ACTIVE = (
    "UPDATE keel_topics SET is_active = FALSE, ended_at = :now, summary = :summary "
    "WHERE conversation_id = :c AND is_active = TRUE AND id <> :id"
)
INSERT = (
    "INSERT INTO keel_topics (id, conversation_id, title, started_at, is_active) "
    "VALUES (:id, :c, :title, :now, TRUE) ON CONFLICT (id) DO NOTHING"
)
REOPEN = (
    "UPDATE keel_topics SET is_active = TRUE, ended_at = NULL "
    "WHERE id = :id AND conversation_id = :c"
)


class TopicNotFound(LookupError):
    """The conversation has no topic with this id."""

    code = "topic_not_found"

    def __init__(self, topic_id: str) -> None:
        """Name the id that was asked for."""
        super().__init__(f"topic {topic_id} not found in this conversation")


@dataclass(frozen=True)
class TopicRow:
    """One topic segment."""

    id: str
    conversation_id: str
    title: str
    summary: str | None
    started_at: datetime
    ended_at: datetime | None
    is_active: bool


def _from_row(row: Row) -> TopicRow:
    return TopicRow(
        id=row["id"],
        conversation_id=row["conversation_id"],
        title=row["title"],
        summary=row["summary"],
        started_at=read_time(row["started_at"]),
        ended_at=read_time(row["ended_at"]) if row["ended_at"] else None,
        is_active=bool(row["is_active"]),
    )


async def _read_topic(tx: Session, topic_id: str) -> TopicRow:
    """The topic ``topic_id``, just written or found in the transaction ``tx``."""
    row = await tx.fetchone("SELECT * FROM keel_topics WHERE id = :id", {"id": topic_id})
    assert row is not None
    return _from_row(row)


class TopicStore:
    """Read and start topic segments."""

    def __init__(self, db: Database, clock: Clock = utcnow) -> None:
        """Work on the app tables of ``db``, stamping rows with ``clock``."""
        self.db = db
        self.clock = clock

    def _params(
        self, conversation_id: str, topic_id: str, previous_summary: str | None
    ) -> dict[str, Any]:
        """What END_ACTIVE needs to end the active topic, now, in favour of ``topic_id``."""
        return {
            "c": conversation_id,
            "id": topic_id,
            "now": self.db.time(self.clock()),
            "summary": previous_summary,
        }

    async def active(self, conversation_id: str) -> TopicRow | None:
        """The conversation's active topic, if it has one."""
        row = await self.db.fetchone(
            "SELECT * FROM keel_topics WHERE conversation_id = :c AND is_active = TRUE",
            {"c": conversation_id},
        )
        return _from_row(row) if row else None

    async def get(self, conversation_id: str, topic_id: str) -> TopicRow | None:
        """The conversation's topic ``topic_id``, if it has one such."""
        row = await self.db.fetchone(
            "SELECT * FROM keel_topics WHERE id = :id AND conversation_id = :c",
            {"id": topic_id, "c": conversation_id},
        )
        return _from_row(row) if row else None

    async def start(
        self,
        conversation_id: str,
        title: str,
        previous_summary: str | None = None,
        topic_id: str | None = None,
    ) -> TopicRow:
        """End the active topic (with ``previous_summary``) and start a new one titled ``title``.

        With ``topic_id`` of a topic that already exists, that topic is returned as it is.
        """
        params = self._params(conversation_id, topic_id or str(uuid.uuid4()), previous_summary)
        async with self.db.transaction() as tx:
            await tx.execute(END_ACTIVE, params)
            await tx.execute(INSERT, {**params, "title": title[:255]})
            return await _read_topic(tx, params["id"])

    async def closed(self, conversation_id: str, limit: int) -> list[TopicRow]:
        """The conversation's last ``limit`` ended topics, oldest first (a bounded query)."""
        rows = await self.db.fetch(
            "SELECT * FROM keel_topics WHERE conversation_id = :c AND is_active = FALSE "
            "ORDER BY ended_at DESC, id DESC LIMIT :n",
            {"c": conversation_id, "n": limit},
        )
        return [_from_row(r) for r in reversed(rows)]

    async def list(self, conversation_id: str) -> list[TopicRow]:
        """Every topic of the conversation, oldest first."""
        rows = await self.db.fetch(
            "SELECT * FROM keel_topics WHERE conversation_id = :c ORDER BY started_at, id",
            {"c": conversation_id},
        )
        return [_from_row(r) for r in rows]

    async def retitle(self, conversation_id: str, topic_id: str, title: str) -> None:
        """Give a topic a new title (a reset's topic, once its first message names it)."""
        await self.db.execute(
            "UPDATE keel_topics SET title = :title WHERE id = :id AND conversation_id = :c",
            {"title": title, "id": topic_id, "c": conversation_id},
        )

    async def reopen(
        self, conversation_id: str, topic_id: str, previous_summary: str | None = None
    ) -> TopicRow:
        """Make an earlier topic the active one again, ending the active one (with its summary).

        A topic that is active already is left as it is (a replayed return changes nothing).
        Raises TopicNotFound when the conversation has no such topic.
        """
        params = self._params(conversation_id, topic_id, previous_summary)
        async with self.db.transaction() as tx:
            found = await tx.fetchone(
                "SELECT is_active FROM keel_topics WHERE id = :id AND conversation_id = :c", params
            )
            if found is None:
                raise TopicNotFound(topic_id)
            if not found["is_active"]:
                await tx.execute(END_ACTIVE, params)
                await tx.execute(REOPEN, params)
            return await _read_topic(tx, topic_id)
