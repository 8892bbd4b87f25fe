"""The message log: every user message, assistant reply and tool result, written once.

``keel_messages`` is append-only. Each row has a ``message_key`` unique within its conversation, so
writing the same message again (a node re-run after a crash, a retried flush) changes nothing; a
key that already holds another user's message is an error (``LogKeyTaken``), never skipped.
Reads are bounded by an index on (conversation_id, topic_id, id): a turn's reads cost the same at
turn 1000 as at turn 10. Written by the graph's nodes and the turn runner; read by the context
builder, topic detection and the API.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from keel.checkpoints.clock import Clock, utcnow
from keel.checkpoints.database import Database, Row, read_json, read_time

COLUMNS = (
    "conversation_id, message_key, user_id, role, content, topic_id, created_at, tool_name, "
    "tool_call_id, tool_calls"
)
INSERT = (
    f"INSERT INTO keel_messages ({COLUMNS}) VALUES (:conversation_id, :message_key, :user_id, "
    ":role, :content, :topic_id, :created_at, :tool_name, :tool_call_id, :tool_calls) "
    "ON CONFLICT (conversation_id, message_key) DO NOTHING"
)


class LogKeyTaken(RuntimeError):
    """A message key of the conversation already holds another user's message."""

    def __init__(self, conversation_id: str, key: str) -> None:
        """Name the conversation and the key."""
        super().__init__(f"message key {key!r} of conversation {conversation_id} is another user's")


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


def _from_row(row: Row) -> LoggedMessage:
    return LoggedMessage(
        id=row["id"],
        key=row["message_key"],
        role=row["role"],
        content=row["content"],
        topic_id=row["topic_id"],
        created_at=read_time(row["created_at"]),
        tool_name=row["tool_name"],
        tool_call_id=row["tool_call_id"],
        tool_calls=read_json(row["tool_calls"]),
    )


class MessageLog:
    """Append and read a conversation's messages."""

    def __init__(self, db: Database, clock: Clock = utcnow) -> None:
        """Work on the app tables of ``db``, stamping rows with ``clock``."""
        self.db = db
        self.clock = clock

    async def append(self, conversation_id: str, user_id: str, rows: list[dict[str, Any]]) -> None:
        """Write ``rows`` (message_key, role, content, topic_id, tool fields) in order, once."""
        if not rows:
            return
        now = self.db.time(self.clock())
        full = [
            {
                "conversation_id": conversation_id,
                "user_id": user_id,
                "created_at": now,
                "tool_name": None,
                "tool_call_id": None,
                **row,
                "tool_calls": self.db.json(row.get("tool_calls")),
            }
            for row in rows
        ]
        if await self.db.executemany(INSERT, full) < len(full):
            await self._check_keys(conversation_id, user_id, [r["message_key"] for r in full])

    async def _check_keys(self, conversation_id: str, user_id: str, keys: list[str]) -> None:
        """Raise LogKeyTaken when a key already written is another user's, not a re-run's."""
        marks = ", ".join(f":k{n}" for n in range(len(keys)))
        params = {"c": conversation_id, "u": user_id, **{f"k{n}": k for n, k in enumerate(keys)}}
        row = await self.db.fetchone(
            "SELECT message_key FROM keel_messages WHERE conversation_id = :c AND user_id <> :u "
            f"AND message_key IN ({marks}) LIMIT 1",
            params,
        )
        if row is not None:
            raise LogKeyTaken(conversation_id, row["message_key"])

    async def last_message_at(self, conversation_id: str) -> datetime | None:
        """When the conversation's latest logged message was written."""
        row = await self.db.fetchone(
            "SELECT created_at FROM keel_messages WHERE conversation_id = :c "
            "ORDER BY id DESC LIMIT 1",
            {"c": conversation_id},
        )
        return read_time(row["created_at"]) if row else None

    async def recent(
        self,
        conversation_id: str,
        *,
        topic_id: str | None = None,
        limit: int = 20,
        exclude_roles: tuple[str, ...] = (),
    ) -> list[LoggedMessage]:
        """The latest ``limit`` messages (of one topic, if given), oldest first."""
        where, params = self._where(conversation_id, topic_id)
        for n, role in enumerate(exclude_roles):
            where += f" AND role <> :role{n}"
            params[f"role{n}"] = role
        rows = await self.db.fetch(
            f"SELECT * FROM keel_messages WHERE {where} ORDER BY id DESC LIMIT :limit",
            {**params, "limit": limit},
        )
        return [_from_row(r) for r in reversed(rows)]

    async def history(
        self,
        conversation_id: str,
        *,
        topic_id: str | None = None,
        after_id: int = 0,
        limit: int = 1000,
    ) -> list[LoggedMessage]:
        """Messages in the order they were written, optionally of one topic, paged by id."""
        where, params = self._where(conversation_id, topic_id)
        rows = await self.db.fetch(
            f"SELECT * FROM keel_messages WHERE {where} AND id > :after ORDER BY id LIMIT :limit",
            {**params, "after": after_id, "limit": limit},
        )
        return [_from_row(r) for r in rows]

    async def page(
        self,
        conversation_id: str,
        *,
        topic_id: str | None = None,
        newest_first: bool = False,
        cursor: int | None = None,
        limit: int = 1000,
    ) -> list[LoggedMessage]:
        """One page of the log in id order (or newest first), starting past ``cursor``'s id."""
        where, params = self._where(conversation_id, topic_id)
        if cursor is not None:
            where += " AND id < :cursor" if newest_first else " AND id > :cursor"
            params["cursor"] = cursor
        order = "DESC" if newest_first else "ASC"
        rows = await self.db.fetch(
            f"SELECT * FROM keel_messages WHERE {where} ORDER BY id {order} LIMIT :limit",
            {**params, "limit": limit},
        )
        return [_from_row(r) for r in rows]

    @staticmethod
    def _where(conversation_id: str, topic_id: str | None) -> tuple[str, dict[str, Any]]:
        if topic_id is None:
            return "conversation_id = :c", {"c": conversation_id}
        return "conversation_id = :c AND topic_id = :t", {"c": conversation_id, "t": topic_id}
