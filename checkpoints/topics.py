"""Topic segments of a conversation: the ``keel_topics`` table.

A conversation has at most one active topic (a partial unique index holds it to that). Starting a
new topic ends the active one (ended_at, summary) in the same transaction. Topics are never
deleted. Used by the topic_detect node, the reset function and the API.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine

from checkpoints.clock import Clock, as_utc, utcnow
from checkpoints.schema import topics


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

    def as_dict(self) -> dict[str, Any]:
        """The topic as JSON-ready data."""
        return {
            "id": self.id,
            "title": self.title,
            "summary": self.summary,
            "started_at": self.started_at.isoformat(),
            "ended_at": self.ended_at.isoformat() if self.ended_at else None,
            "is_active": self.is_active,
        }


def _from_row(row: sa.Row[Any]) -> TopicRow:
    return TopicRow(
        id=row.id,
        conversation_id=row.conversation_id,
        title=row.title,
        summary=row.summary,
        started_at=as_utc(row.started_at),
        ended_at=as_utc(row.ended_at) if row.ended_at else None,
        is_active=bool(row.is_active),
    )


class TopicStore:
    """Read and start topic segments."""

    def __init__(self, engine: AsyncEngine, clock: Clock = utcnow) -> None:
        """Work on the app tables of ``engine``, stamping rows with ``clock``."""
        self.engine = engine
        self.clock = clock

    async def active(self, conversation_id: str) -> TopicRow | None:
        """The conversation's active topic, if it has one."""
        async with self.engine.connect() as conn:
            result = await conn.execute(
                sa.select(topics).where(
                    topics.c.conversation_id == conversation_id, topics.c.is_active.is_(True)
                )
            )
            row = result.one_or_none()
        return _from_row(row) if row else None

    async def start(
        self, conversation_id: str, title: str, previous_summary: str | None = None
    ) -> TopicRow:
        """End the active topic (with ``previous_summary``) and start a new one titled ``title``."""
        now = self.clock()
        new_id = str(uuid.uuid4())
        async with self.engine.begin() as conn:
            await conn.execute(
                topics.update()
                .where(topics.c.conversation_id == conversation_id, topics.c.is_active.is_(True))
                .values(is_active=False, ended_at=now, summary=previous_summary)
            )
            await conn.execute(
                topics.insert().values(
                    id=new_id,
                    conversation_id=conversation_id,
                    title=title[:255],
                    started_at=now,
                    is_active=True,
                )
            )
        return TopicRow(new_id, conversation_id, title[:255], None, now, None, True)

    async def list(self, conversation_id: str) -> list[TopicRow]:
        """Every topic of the conversation, oldest first."""
        async with self.engine.connect() as conn:
            result = await conn.execute(
                sa.select(topics)
                .where(topics.c.conversation_id == conversation_id)
                .order_by(topics.c.started_at, topics.c.id)
            )
            return [_from_row(r) for r in result]
