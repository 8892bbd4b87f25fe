"""The tool-call ledger: each mutating tool call's result, recorded with the mutation.

A tool call id is recorded in ``keel_tool_results`` in the same transaction as the task change it
made, so after a crash a replayed call (same id) returns the recorded result and changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from checkpoints.schema import tool_results


@dataclass(frozen=True)
class Recorded:
    """A result recorded for a tool call."""

    status: str
    content: str


async def recall(conn: AsyncConnection, user_id: str, tool_call_id: str) -> Recorded | None:
    """The recorded result of ``tool_call_id``, if the call already ran."""
    row = (
        await conn.execute(
            sa.select(tool_results.c.status, tool_results.c.content).where(
                tool_results.c.user_id == user_id, tool_results.c.tool_call_id == tool_call_id
            )
        )
    ).one_or_none()
    return Recorded(row.status, row.content) if row else None


async def record(
    conn: AsyncConnection,
    user_id: str,
    tool_call_id: str,
    tool_name: str,
    status: str,
    content: str,
) -> None:
    """Record the result of ``tool_call_id`` (in the caller's transaction)."""
    await conn.execute(
        tool_results.insert().values(
            user_id=user_id,
            tool_call_id=tool_call_id,
            tool_name=tool_name,
            status=status,
            content=content,
            created_at=datetime.now(UTC),
        )
    )
