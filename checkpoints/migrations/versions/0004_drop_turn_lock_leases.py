"""Drop the SQLite turn-lock leases: turn locks are file locks now, released by the OS.

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Drop keel_locks."""
    op.drop_table("keel_locks")


def downgrade() -> None:
    """Create keel_locks again."""
    op.create_table(
        "keel_locks",
        sa.Column("conversation_id", sa.String(36), primary_key=True),
        sa.Column("holder", sa.String(64), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
    )
