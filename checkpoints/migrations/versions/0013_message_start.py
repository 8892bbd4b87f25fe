"""The checkpoint a turn started from, on the turn's own message.

``keel_messages.from_checkpoint`` is written on a turn's opening message: the checkpoint a message
is edited from, and what the messages sent from one checkpoint (the branches of a conversation)
have in common. Rows written before it have none.

Revision ID: 0013
Revises: 0012
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add keel_messages.from_checkpoint and its index."""
    with op.batch_alter_table("keel_messages") as batch:
        batch.add_column(sa.Column("from_checkpoint", sa.String(64), nullable=True))
    op.create_index(
        "ix_keel_messages_from_checkpoint", "keel_messages", ["conversation_id", "from_checkpoint"]
    )


def downgrade() -> None:
    """Drop them."""
    op.drop_index("ix_keel_messages_from_checkpoint", table_name="keel_messages")
    with op.batch_alter_table("keel_messages") as batch:
        batch.drop_column("from_checkpoint")
