"""When a task is due: its day (``due_date``) and, with a time of day, its moment (``due_at``).

Revision ID: 0016
Revises: 0015
"""

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add keel_tasks.due_date and keel_tasks.due_at."""
    with op.batch_alter_table("keel_tasks") as batch:
        batch.add_column(sa.Column("due_date", sa.Date, nullable=True))
        batch.add_column(sa.Column("due_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    """Drop keel_tasks.due_date and keel_tasks.due_at."""
    with op.batch_alter_table("keel_tasks") as batch:
        batch.drop_column("due_at")
        batch.drop_column("due_date")
