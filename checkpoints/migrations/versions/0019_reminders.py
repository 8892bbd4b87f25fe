"""Reminders: when a task is next reminded (``keel_tasks.remind_at``, ``remind_in``) and the
reminders that fell due (``keel_reminders``).

Revision ID: 0019
Revises: 0018
"""  # noqa: D205

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add keel_tasks.remind_at and remind_in, and the table keel_reminders."""
    with op.batch_alter_table("keel_tasks") as batch:
        batch.add_column(sa.Column("remind_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("remind_in", sa.String(36), nullable=True))
        batch.create_index("ix_keel_tasks_remind_at", ["remind_at"])
    op.create_table(
        "keel_reminders",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("user_id", sa.String(200), nullable=False),
        sa.Column("task_number", sa.BigInteger, nullable=False),
        sa.Column("title", sa.String(500), nullable=False),
        sa.Column("conversation_id", sa.String(36), nullable=True),
        sa.Column("remind_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("next_try_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("delivered_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("outcome", sa.String(16), nullable=True),
        sa.Column("last_error", sa.String(200), nullable=True),
    )
    op.create_index("ix_keel_reminders_user", "keel_reminders", ["user_id", "remind_at"])
    op.create_index(
        "ix_keel_reminders_waiting",
        "keel_reminders",
        ["next_try_at"],
        sqlite_where=sa.text("delivered_at IS NULL"),
        postgresql_where=sa.text("delivered_at IS NULL"),
    )


def downgrade() -> None:
    """Drop keel_reminders and keel_tasks.remind_at and remind_in."""
    op.drop_table("keel_reminders")
    with op.batch_alter_table("keel_tasks") as batch:
        batch.drop_index("ix_keel_tasks_remind_at")
        batch.drop_column("remind_in")
        batch.drop_column("remind_at")
