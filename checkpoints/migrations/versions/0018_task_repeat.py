"""How often a task repeats: its rule (``repeat_rule``, an iCalendar RRULE) and the words said.

Revision ID: 0018
Revises: 0017
"""

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add keel_tasks.repeat_rule and keel_tasks.repeat_words."""
    with op.batch_alter_table("keel_tasks") as batch:
        batch.add_column(sa.Column("repeat_rule", sa.String(200), nullable=True))
        batch.add_column(sa.Column("repeat_words", sa.String(100), nullable=True))


def downgrade() -> None:
    """Drop keel_tasks.repeat_rule and keel_tasks.repeat_words."""
    with op.batch_alter_table("keel_tasks") as batch:
        batch.drop_column("repeat_words")
        batch.drop_column("repeat_rule")
