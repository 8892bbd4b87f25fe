"""Recorded tool results (no mutation runs twice) and checkpoint backups.

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create keel_tool_results and keel_backups."""
    op.create_table(
        "keel_tool_results",
        sa.Column("user_id", sa.String(200), primary_key=True),
        sa.Column("tool_call_id", sa.String(200), primary_key=True),
        sa.Column("tool_name", sa.String(100), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "keel_backups",
        sa.Column("backup_id", sa.String(120), primary_key=True),
        sa.Column("conversation_id", sa.String(36), nullable=False),
        sa.Column("checkpoint_id", sa.String(64), nullable=False),
        sa.Column("reason", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index(
        "ix_keel_backups_conversation", "keel_backups", ["conversation_id", "created_at"]
    )


def downgrade() -> None:
    """Drop keel_tool_results and keel_backups."""
    op.drop_table("keel_backups")
    op.drop_table("keel_tool_results")
