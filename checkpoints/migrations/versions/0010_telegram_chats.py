"""Each Telegram chat member's active conversation, and how far the bot answered them.

Revision ID: 0010
Revises: 0009
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add keel_telegram_chats."""
    op.create_table(
        "keel_telegram_chats",
        sa.Column("chat_id", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("telegram_user_id", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("conversation_id", sa.String(36), nullable=False),
        sa.Column("answered_update_id", sa.BigInteger, nullable=True),
        sa.Column("question_message_id", sa.BigInteger, nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index(
        "ix_keel_telegram_chats_conversation", "keel_telegram_chats", ["conversation_id"]
    )


def downgrade() -> None:
    """Drop keel_telegram_chats."""
    op.drop_table("keel_telegram_chats")
