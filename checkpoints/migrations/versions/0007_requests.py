"""Remember the messages sent with an idempotency key, and what they were answered.

Revision ID: 0007
Revises: 0006
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add keel_requests."""
    op.create_table(
        "keel_requests",
        sa.Column("conversation_id", sa.String(36), primary_key=True),
        sa.Column("request_key", sa.String(200), primary_key=True),
        sa.Column("content_sha256", sa.String(64), nullable=False),
        sa.Column("result", sa.Text, nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_keel_requests_created", "keel_requests", ["conversation_id", "created_at"])


def downgrade() -> None:
    """Drop keel_requests."""
    op.drop_table("keel_requests")
