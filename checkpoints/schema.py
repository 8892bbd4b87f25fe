"""The app tables that live beside the checkpoints in the same database.

One ``MetaData`` for every table keel owns (conversations and the todo tasks), so that the schema
is created, and later migrated, in one place. The checkpointer's own tables are managed by the
LangGraph saver.
"""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

conversations = sa.Table(
    "keel_conversations",
    metadata,
    sa.Column("id", sa.String(36), primary_key=True),
    sa.Column("user_id", sa.String(200), nullable=False, index=True),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
)

tasks = sa.Table(
    "keel_tasks",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("user_id", sa.String(200), nullable=False, index=True),
    sa.Column("title", sa.String(500), nullable=False),
    sa.Column("completed", sa.Boolean, nullable=False, default=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    sqlite_autoincrement=True,
)
