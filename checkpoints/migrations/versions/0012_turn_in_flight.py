"""The turn under way, noted on its conversation, and taking a turn in one statement.

``keel_conversations.turn_in_flight`` holds what a turn noted before its tools acted (the
checkpoint it started from, its message, the model's tool calls): the next turn finishes a turn
whose process died. On PostgreSQL, ``keel_take_turn`` takes a conversation's turn lock and then
reads its owner, the turn in flight and its newest checkpoint, each read after the lock is held
(a volatile function's statements see what committed before them), in one round trip.

Revision ID: 0012
Revises: 0011
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

TAKE_TURN = """
CREATE OR REPLACE FUNCTION keel_take_turn(lock_key bigint, conversation text)
RETURNS TABLE (taken boolean, owner text, in_flight json, newest text)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    taken := pg_try_advisory_lock(lock_key);
    IF taken THEN
        SELECT c.user_id, c.turn_in_flight INTO owner, in_flight
        FROM keel_conversations c WHERE c.id = conversation;
        IF to_regclass('checkpoints') IS NOT NULL THEN
            SELECT k.checkpoint_id INTO newest FROM checkpoints k
            WHERE k.thread_id = conversation AND k.checkpoint_ns = ''
            ORDER BY k.checkpoint_id DESC LIMIT 1;
        END IF;
    END IF;
    RETURN NEXT;
END
$$
"""


def upgrade() -> None:
    """Add keel_conversations.turn_in_flight; on PostgreSQL, the function keel_take_turn."""
    with op.batch_alter_table("keel_conversations") as batch:
        batch.add_column(sa.Column("turn_in_flight", sa.JSON, nullable=True))
    if op.get_bind().dialect.name == "postgresql":
        op.execute(TAKE_TURN)


def downgrade() -> None:
    """Drop them."""
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION IF EXISTS keel_take_turn(bigint, text)")
    with op.batch_alter_table("keel_conversations") as batch:
        batch.drop_column("turn_in_flight")
