"""Number each user's tasks from 1: ``keel_tasks.number`` and a counter per user.

Existing tasks are numbered per user in the order they were created; each counter starts after
the user's highest number, so a number is never given twice, not even after a delete.

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None
KEEP = {"sqlite_autoincrement": True}
"""SQLite rebuilds the table in batch mode: keep ids from ever being given twice."""


def upgrade() -> None:
    """Add keel_tasks.number (backfilled) and keel_task_counters."""
    with op.batch_alter_table("keel_tasks", table_kwargs=KEEP) as batch:
        batch.add_column(sa.Column("number", sa.BigInteger, nullable=True))
    op.execute(
        "UPDATE keel_tasks SET number = (SELECT count(*) FROM keel_tasks t "
        "WHERE t.user_id = keel_tasks.user_id AND t.id <= keel_tasks.id)"
    )
    with op.batch_alter_table("keel_tasks", table_kwargs=KEEP) as batch:
        batch.alter_column("number", existing_type=sa.BigInteger, nullable=False)
        batch.create_index("ux_keel_tasks_user_number", ["user_id", "number"], unique=True)
    op.create_table(
        "keel_task_counters",
        sa.Column("user_id", sa.String(200), primary_key=True),
        sa.Column("last_number", sa.BigInteger, nullable=False),
    )
    op.execute(
        "INSERT INTO keel_task_counters (user_id, last_number) "
        "SELECT user_id, max(number) FROM keel_tasks GROUP BY user_id"
    )


def downgrade() -> None:
    """Drop the numbers and the counters."""
    op.drop_table("keel_task_counters")
    with op.batch_alter_table("keel_tasks", table_kwargs=KEEP) as batch:
        batch.drop_index("ux_keel_tasks_user_number")
        batch.drop_column("number")
