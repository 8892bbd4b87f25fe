"""The SQL a message-log write is made of: its columns, the one-row insert, the guarded batch.

A turn's rows go in with one statement (``batch_insert``) when nothing stands in their way; the
guard (``GUARD``) keeps a batch out entirely when one of its keys is another user's or when the
turn's slot on its branch holds another turn's message, and ``keel.checkpoints.messages.MessageLog``
then writes row by row (``INSERT``) in a transaction, to find out which.
"""

from __future__ import annotations

from keel.checkpoints.database import Database

COLUMNS = (
    "conversation_id, message_key, user_id, role, content, topic_id, created_at, tool_name, "
    "tool_call_id, tool_calls, branch, turn, opens_turn, from_checkpoint"
)
INSERT = (
    f"INSERT INTO keel_messages ({COLUMNS}) VALUES (:conversation_id, :message_key, :user_id, "
    ":role, :content, :topic_id, :created_at, :tool_name, :tool_call_id, :tool_calls, :branch, "
    ":turn, :opens_turn, :from_checkpoint) ON CONFLICT DO NOTHING"
)
"""A row whose key is written already, or a turn's opening message whose slot on its branch is
taken (a fork: ``MessageLog.append`` moves the turn), is skipped."""
NAMES = [c.strip() for c in COLUMNS.split(",")]
TYPED = {"tool_calls": "json", "turn": "integer"}
"""PostgreSQL columns whose type a row of parameters cannot tell when they are all null."""
GUARD = (
    "NOT EXISTS (SELECT 1 FROM keel_messages WHERE conversation_id = :g_c AND user_id <> :g_u "
    "AND message_key IN ({keys})) AND NOT EXISTS (SELECT 1 FROM keel_messages "
    "WHERE conversation_id = :g_c AND branch = :g_b AND turn = :g_t AND opens_turn "
    "AND message_key <> :g_k)"
)
"""A batch goes in only when none of its keys is another user's and, when it opens a turn, the
turn's slot on its branch is free or its own: else nothing of it is written here."""


def batch_insert(db: Database, count: int) -> str:
    """One statement writing ``count`` rows (parameters ``r{n}_{column}``) when ``GUARD`` holds.

    A row whose key is written already is skipped; the rest go in together, or none of them. The
    commit does not wait for the disk (``Database.unflushed``): the turn's checkpoint, written
    after it, makes it durable first.
    """

    def value(n: int, name: str) -> str:
        if n == 0 and db.dialect == "postgresql" and name in TYPED:
            return f"CAST(:r0_{name} AS {TYPED[name]})"
        return f":r{n}_{name}"

    rows = ", ".join(f"({', '.join(value(n, c) for c in NAMES)})" for n in range(count))
    keys = ", ".join(f":r{n}_message_key" for n in range(count))
    unflushed = f" CROSS JOIN {db.unflushed}" if db.unflushed else ""
    return (
        f"INSERT INTO keel_messages ({COLUMNS}) SELECT batch.* FROM (VALUES {rows}) AS batch"
        f"{unflushed} WHERE {GUARD.format(keys=keys)} ON CONFLICT DO NOTHING"
    )
