"""The message log: every user message, assistant reply and tool result, written once.

``keel_messages`` is append-only. Each row has a ``message_key`` unique within its conversation, so
writing the same message again (a node re-run after a crash, a retried flush) changes nothing.
Reads are bounded by an index on (conversation_id, topic_id, id): a turn's reads cost the same at
turn 1000 as at turn 10. Written by the graph's nodes and the turn runner; read by the context
builder, topic detection and the API.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncEngine

from checkpoints.clock import Clock, as_utc, utcnow
from checkpoints.schema import messages


@dataclass(frozen=True)
class LoggedMessage:
    """One row of the message log."""

    id: int
    key: str
    role: str
    content: str
    topic_id: str | None
    created_at: datetime
    tool_name: str | None = None
    tool_call_id: str | None = None
    tool_calls: list[dict[str, Any]] | None = None

    def as_dict(self) -> dict[str, Any]:
        """The row as JSON-ready data."""
        return {
            "id": self.id,
            "role": self.role,
            "content": self.content,
            "topic_id": self.topic_id,
            "created_at": self.created_at.isoformat(),
            "tool_name": self.tool_name,
            "tool_calls": self.tool_calls,
        }


def _from_row(row: sa.Row[Any]) -> LoggedMessage:
    return LoggedMessage(
        id=row.id,
        key=row.message_key,
        role=row.role,
        content=row.content,
        topic_id=row.topic_id,
        created_at=as_utc(row.created_at),
        tool_name=row.tool_name,
        tool_call_id=row.tool_call_id,
        tool_calls=row.tool_calls,
    )


class MessageLog:
    """Append and read a conversation's messages."""

    def __init__(self, engine: AsyncEngine, clock: Clock = utcnow) -> None:
        """Work on the app tables of ``engine``, stamping rows with ``clock``."""
        self.engine = engine
        self.clock = clock

    def _insert(self) -> Any:
        if self.engine.dialect.name == "postgresql":
            return postgresql.insert(messages).on_conflict_do_nothing(
                constraint="ux_keel_messages_key"
            )
        return sqlite.insert(messages).on_conflict_do_nothing()

    async def append(self, conversation_id: str, user_id: str, rows: list[dict[str, Any]]) -> None:
        """Write ``rows`` (message_key, role, content, topic_id, tool fields) in order, once."""
        if not rows:
            return
        now = self.clock()
        full = [
            {
                "conversation_id": conversation_id,
                "user_id": user_id,
                "created_at": now,
                "tool_name": None,
                "tool_call_id": None,
                "tool_calls": None,
                **row,
            }
            for row in rows
        ]
        async with self.engine.begin() as conn:
            await conn.execute(self._insert(), full)

    async def last_message_at(self, conversation_id: str) -> datetime | None:
        """When the conversation's latest logged message was written."""
        async with self.engine.connect() as conn:
            result = await conn.execute(
                sa.select(messages.c.created_at)
                .where(messages.c.conversation_id == conversation_id)
                .order_by(messages.c.id.desc())
                .limit(1)
            )
            value = result.scalar_one_or_none()
        return as_utc(value) if value else None

    async def recent(
        self,
        conversation_id: str,
        *,
        topic_id: str | None = None,
        limit: int = 20,
        exclude_roles: tuple[str, ...] = (),
    ) -> list[LoggedMessage]:
        """The latest ``limit`` messages (of one topic, if given), oldest first."""
        query = sa.select(messages).where(messages.c.conversation_id == conversation_id)
        if topic_id is not None:
            query = query.where(messages.c.topic_id == topic_id)
        if exclude_roles:
            query = query.where(messages.c.role.not_in(exclude_roles))
        async with self.engine.connect() as conn:
            result = await conn.execute(query.order_by(messages.c.id.desc()).limit(limit))
            rows = [_from_row(r) for r in result]
        return rows[::-1]

    async def history(
        self,
        conversation_id: str,
        *,
        topic_id: str | None = None,
        after_id: int = 0,
        limit: int = 1000,
    ) -> list[LoggedMessage]:
        """Messages in the order they were written, optionally of one topic, paged by id."""
        query = sa.select(messages).where(
            messages.c.conversation_id == conversation_id, messages.c.id > after_id
        )
        if topic_id is not None:
            query = query.where(messages.c.topic_id == topic_id)
        async with self.engine.connect() as conn:
            result = await conn.execute(query.order_by(messages.c.id).limit(limit))
            return [_from_row(r) for r in result]

    async def count(self, conversation_id: str, topic_id: str | None = None) -> int:
        """How many messages the conversation (or one of its topics) has."""
        query = sa.select(sa.func.count()).where(messages.c.conversation_id == conversation_id)
        if topic_id is not None:
            query = query.where(messages.c.topic_id == topic_id)
        async with self.engine.connect() as conn:
            return int((await conn.execute(query)).scalar_one())
