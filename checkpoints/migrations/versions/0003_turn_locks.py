"""Turn locks for databases without advisory locks (SQLite).

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create keel_locks."""
    op.create_table(
        "keel_locks",
        sa.Column("conversation_id", sa.String(36), primary_key=True),
        sa.Column("holder", sa.String(64), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    """Drop keel_locks."""
    op.drop_table("keel_locks")
