"""A one-row table that readiness checks write to: a database that cannot take writes is not ready.

Revision ID: 0008
Revises: 0007
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add keel_health."""
    op.create_table(
        "keel_health",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("checked_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    """Drop keel_health."""
    op.drop_table("keel_health")
