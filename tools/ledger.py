"""The tool-call ledger: each mutating tool call's result, recorded with the mutation.

A tool call id is recorded in ``keel_tool_results`` in the same transaction as the task change it
made, so after a crash a replayed call (same id) returns the recorded result and changes nothing.
A call recorded already makes the record fail as a duplicate, and the whole transaction with it.
"""

from __future__ import annotations

from dataclasses import dataclass

from keel.checkpoints.clock import Clock, utcnow
from keel.checkpoints.database import Database, Session


@dataclass(frozen=True)
class Recorded:
    """A result recorded for a tool call."""

    status: str
    content: str


async def recall(tx: Session, user_id: str, tool_call_id: str) -> Recorded | None:
    """The recorded result of ``tool_call_id``, if the call already ran."""
    row = await tx.fetchone(
        "SELECT status, content FROM keel_tool_results "
        "WHERE user_id = :user AND tool_call_id = :id",
        {"user": user_id, "id": tool_call_id},
    )
    return Recorded(row["status"], row["content"]) if row else None


async def record(
    db: Database,
    tx: Session,
    user_id: str,
    tool_call_id: str,
    tool_name: str,
    status: str,
    content: str,
    clock: Clock = utcnow,
) -> None:
    """Record the result of ``tool_call_id`` (in the caller's transaction ``tx``).

    ``clock`` stamps the row: the task store's, so that one clock stamps the call and its change.
    """
    await tx.execute(
        "INSERT INTO keel_tool_results (user_id, tool_call_id, tool_name, status, content, "
        "created_at) VALUES (:user, :id, :name, :status, :content, :at)",
        {
            "user": user_id,
            "id": tool_call_id,
            "name": tool_name,
            "status": status,
            "content": content,
            "at": db.time(clock()),
        },
    )
