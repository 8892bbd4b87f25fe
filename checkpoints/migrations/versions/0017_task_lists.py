"""A task's list (``list_name``: "todo" unless named) and its place in it (``position``).

Revision ID: 0017
Revises: 0016
"""

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add keel_tasks.list_name and keel_tasks.position (each task where its number puts it)."""
    with op.batch_alter_table("keel_tasks") as batch:
        batch.add_column(
            sa.Column("list_name", sa.String(40), nullable=False, server_default="todo")
        )
        batch.add_column(sa.Column("position", sa.BigInteger, nullable=False, server_default="0"))
    op.execute("UPDATE keel_tasks SET position = number")
    op.create_index("ix_keel_tasks_user_list", "keel_tasks", ["user_id", "list_name", "position"])


def downgrade() -> None:
    """Drop keel_tasks.list_name and keel_tasks.position."""
    op.drop_index("ix_keel_tasks_user_list", table_name="keel_tasks")
    with op.batch_alter_table("keel_tasks") as batch:
        batch.drop_column("position")
        batch.drop_column("list_name")
