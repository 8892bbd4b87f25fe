"""Index the message log by (conversation_id, id): a conversation's latest message in one lookup.

The conversation list (latest message and first user message of each) and topic detection's
"when was the last message" read a conversation's log by id, across topics; the older index leads
with the topic and could not serve them, so PostgreSQL scanned the whole log backwards.

Revision ID: 0006
Revises: 0005
"""

from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add ix_keel_messages_conversation."""
    op.create_index("ix_keel_messages_conversation", "keel_messages", ["conversation_id", "id"])


def downgrade() -> None:
    """Drop it."""
    op.drop_index("ix_keel_messages_conversation", table_name="keel_messages")
