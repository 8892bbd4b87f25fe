"""A conversation's own name, set by renaming it (null: named by its first message).

Revision ID: 0011
Revises: 0010
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add keel_conversations.name."""
    with op.batch_alter_table("keel_conversations") as batch:
        batch.add_column(sa.Column("name", sa.String(200), nullable=True))


def downgrade() -> None:
    """Drop keel_conversations.name."""
    with op.batch_alter_table("keel_conversations") as batch:
        batch.drop_column("name")
