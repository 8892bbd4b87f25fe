"""The Telegram messages and button presses the bot answered, instead of the last update id.

Telegram numbers updates in order, but after a week without updates it starts again from a
random number: "the last update answered" would then skip people's messages for good. Each chat's
answered messages and presses are kept for a while instead (``keel_telegram_answered``).

Revision ID: 0014
Revises: 0013
"""

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add keel_telegram_answered; drop keel_telegram_chats.answered_update_id."""
    op.create_table(
        "keel_telegram_answered",
        sa.Column("chat_id", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("said", sa.String(100), primary_key=True),
        sa.Column("answered_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_keel_telegram_answered_at", "keel_telegram_answered", ["answered_at"])
    with op.batch_alter_table("keel_telegram_chats") as batch:
        batch.drop_column("answered_update_id")


def downgrade() -> None:
    """Put the column back (empty) and drop keel_telegram_answered."""
    with op.batch_alter_table("keel_telegram_chats") as batch:
        batch.add_column(sa.Column("answered_update_id", sa.BigInteger, nullable=True))
    op.drop_table("keel_telegram_answered")
