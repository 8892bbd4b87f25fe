"""Branches in the message log: each row's branch and turn, and one opening message per turn.

A turn forked from an earlier checkpoint is written to a branch of its own
(``keel.checkpoints.branches``). Rows written before keep the main branch; their turn is read from
their key (``{conversation}:turn-{n}:...``), and a turn's user message (``...:turn-{n}:user``)
opens it, so a fork from an earlier turn of an existing conversation is recognised too.

Revision ID: 0009
Revises: 0008
"""

import re

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

TURN = re.compile(r":turn-(\d+):")
OPENING = re.compile(r"^[^:]+:turn-\d+:user$")
BATCH = 1000


def upgrade() -> None:
    """Add branch, turn and opens_turn (read from the keys), and the one-opening index."""
    op.add_column(
        "keel_messages",
        sa.Column("branch", sa.String(64), nullable=False, server_default="main"),
    )
    op.add_column("keel_messages", sa.Column("turn", sa.Integer, nullable=True))
    op.add_column(
        "keel_messages",
        sa.Column("opens_turn", sa.Boolean, nullable=False, server_default=sa.false()),
    )
    _backfill(op.get_bind())
    op.create_index(
        "ux_keel_messages_turn",
        "keel_messages",
        ["conversation_id", "branch", "turn"],
        unique=True,
        sqlite_where=sa.text("opens_turn"),
        postgresql_where=sa.text("opens_turn"),
    )


def _backfill(connection: sa.Connection) -> None:
    """Each existing row's turn, from its key, a batch of rows at a time."""
    select = sa.text(
        "SELECT id, message_key FROM keel_messages WHERE id > :after "
        "AND message_key LIKE :pattern ORDER BY id LIMIT :n"
    )
    update = sa.text("UPDATE keel_messages SET turn = :turn, opens_turn = :opens WHERE id = :id")
    after = 0
    while rows := connection.execute(
        select, {"after": after, "pattern": "%:turn-%", "n": BATCH}
    ).all():
        changes = [
            {"id": row.id, "turn": int(found.group(1)), "opens": bool(OPENING.match(key))}
            for row in rows
            if (found := TURN.search(key := row.message_key))
        ]
        if changes:
            connection.execute(update, changes)
        after = rows[-1].id


def downgrade() -> None:
    """Drop them."""
    op.drop_index("ux_keel_messages_turn", table_name="keel_messages")
    with op.batch_alter_table(
        "keel_messages", table_kwargs={"sqlite_autoincrement": True}
    ) as batch:
        batch.drop_column("opens_turn")
        batch.drop_column("turn")
        batch.drop_column("branch")
