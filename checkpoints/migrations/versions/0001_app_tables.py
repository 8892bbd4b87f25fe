"""App tables: conversations, tasks, topics and the message log.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the first four app tables."""
    op.create_table(
        "keel_conversations",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("user_id", sa.String(200), nullable=False, index=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "keel_tasks",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("user_id", sa.String(200), nullable=False, index=True),
        sa.Column("title", sa.String(500), nullable=False),
        sa.Column("completed", sa.Boolean, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sqlite_autoincrement=True,
    )
    op.create_table(
        "keel_topics",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("conversation_id", sa.String(36), nullable=False),
        sa.Column("title", sa.String(255), nullable=False),
        sa.Column("summary", sa.Text, nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("is_active", sa.Boolean, nullable=False),
    )
    op.create_index("ix_keel_topics_conversation", "keel_topics", ["conversation_id", "started_at"])
    op.create_index(
        "ux_keel_topics_one_active",
        "keel_topics",
        ["conversation_id"],
        unique=True,
        sqlite_where=sa.text("is_active"),
        postgresql_where=sa.text("is_active"),
    )
    op.create_table(
        "keel_messages",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer, "sqlite"),
            primary_key=True,
            autoincrement=True,
        ),
        sa.Column("conversation_id", sa.String(36), nullable=False),
        sa.Column("message_key", sa.String(200), nullable=False),
        sa.Column("user_id", sa.String(200), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("topic_id", sa.String(36), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("tool_name", sa.String(100), nullable=True),
        sa.Column("tool_call_id", sa.String(200), nullable=True),
        sa.Column("tool_calls", sa.JSON, nullable=True),
        sa.UniqueConstraint("conversation_id", "message_key", name="ux_keel_messages_key"),
        sqlite_autoincrement=True,
    )
    op.create_index(
        "ix_keel_messages_topic", "keel_messages", ["conversation_id", "topic_id", "id"]
    )


def downgrade() -> None:
    """Drop the four tables."""
    for table in ("keel_messages", "keel_topics", "keel_tasks", "keel_conversations"):
        op.drop_table(table)
