"""A turn is carried by LangGraph's checkpoints: the turn noted in flight goes.

keel runs each turn with LangGraph's "sync" durability, so a turn a crash cut off stands at a
checkpoint with a step left to run, and is finished from there.
``keel_conversations.turn_in_flight`` is dropped, and ``keel_take_turn`` reads the owner and the
newest checkpoint only.

Revision ID: 0015
Revises: 0014
"""

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

TAKE_TURN = """
CREATE FUNCTION keel_take_turn(lock_key bigint, conversation text)
RETURNS TABLE (taken boolean, owner text, newest text)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    taken := pg_try_advisory_lock(lock_key);
    IF taken THEN
        SELECT c.user_id INTO owner FROM keel_conversations c WHERE c.id = conversation;
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
    """Drop keel_conversations.turn_in_flight; keel_take_turn without it."""
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION IF EXISTS keel_take_turn(bigint, text)")
        op.execute(TAKE_TURN)
    with op.batch_alter_table("keel_conversations") as batch:
        batch.drop_column("turn_in_flight")


def downgrade() -> None:
    """Add the column back (empty), and the function of 0012."""
    from importlib import import_module

    before = import_module("keel.checkpoints.migrations.versions.0012_turn_in_flight")
    with op.batch_alter_table("keel_conversations") as batch:
        batch.add_column(sa.Column("turn_in_flight", sa.JSON, nullable=True))
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION IF EXISTS keel_take_turn(bigint, text)")
        op.execute(before.TAKE_TURN)
