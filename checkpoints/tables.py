"""The app tables that live beside the checkpoints in the same database.

One ``MetaData`` for every table keel owns (conversations and the todo tasks), so that the schema
is created, and later migrated, in one place. The checkpointer's own tables are managed by the
LangGraph saver.
"""

from __future__ import annotations

import sqlalchemy as sa

from keel.checkpoints.task_fields import FIELDS

metadata = sa.MetaData()

conversations = sa.Table(
    "keel_conversations",
    metadata,
    sa.Column("id", sa.String(36), primary_key=True),
    sa.Column("user_id", sa.String(200), nullable=False, index=True),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("name", sa.String(200), nullable=True),
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
    sa.Column("number", sa.BigInteger, nullable=False),
    *(column for field in FIELDS for column in field.columns()),
    sa.Column("remind_at", sa.DateTime(timezone=True), nullable=True),
    sa.Column("remind_in", sa.String(36), nullable=True),
    sa.Index("ux_keel_tasks_user_number", "user_id", "number", unique=True),
    sa.Index("ix_keel_tasks_user_list", "user_id", "list_name", "position"),
    sa.Index("ix_keel_tasks_remind_at", "remind_at"),
    sqlite_autoincrement=True,
)
"""A task's id as its user sees it is ``number``: each user's tasks count from 1. The columns of
its fields beyond the title are declared with them (``keel.checkpoints.task_fields``).
``remind_at`` is when it is next reminded (its time of day when it gets one; none once reminded,
done or without a time), ``remind_in`` the conversation that set it
(``keel.checkpoints.reminders``)."""

reminders = sa.Table(
    "keel_reminders",
    metadata,
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
    sa.Index("ix_keel_reminders_user", "user_id", "remind_at"),
    sa.Index(
        "ix_keel_reminders_waiting",
        "next_try_at",
        sqlite_where=sa.text("delivered_at IS NULL"),
        postgresql_where=sa.text("delivered_at IS NULL"),
    ),
)
"""Reminders that fell due: one row per task and time, made in the transaction that takes the
time off its task, then delivered (``outcome`` delivered, or dropped: the task was done or
deleted first). A row's id is the key its delivery runs under, so it is never delivered twice."""

task_counters = sa.Table(
    "keel_task_counters",
    metadata,
    sa.Column("user_id", sa.String(200), primary_key=True),
    sa.Column("last_number", sa.BigInteger, nullable=False),
)
"""The last task number given to each user (numbers are never given twice)."""

topics = sa.Table(
    "keel_topics",
    metadata,
    sa.Column("id", sa.String(36), primary_key=True),
    sa.Column("conversation_id", sa.String(36), nullable=False),
    sa.Column("title", sa.String(255), nullable=False),
    sa.Column("summary", sa.Text, nullable=True),
    sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
    sa.Column("is_active", sa.Boolean, nullable=False),
    sa.Index("ix_keel_topics_conversation", "conversation_id", "started_at"),
    sa.Index(
        "ux_keel_topics_one_active",
        "conversation_id",
        unique=True,
        sqlite_where=sa.text("is_active"),
        postgresql_where=sa.text("is_active"),
    ),
)

messages = sa.Table(
    "keel_messages",
    metadata,
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
    sa.Column("branch", sa.String(64), nullable=False, server_default="main"),
    sa.Column("turn", sa.Integer, nullable=True),
    sa.Column("opens_turn", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("from_checkpoint", sa.String(64), nullable=True),
    sa.UniqueConstraint("conversation_id", "message_key", name="ux_keel_messages_key"),
    sa.Index("ix_keel_messages_topic", "conversation_id", "topic_id", "id"),
    sa.Index("ix_keel_messages_conversation", "conversation_id", "id"),
    sa.Index(
        "ux_keel_messages_turn",
        "conversation_id",
        "branch",
        "turn",
        unique=True,
        sqlite_where=sa.text("opens_turn"),
        postgresql_where=sa.text("opens_turn"),
    ),
    sa.Index("ix_keel_messages_from_checkpoint", "conversation_id", "from_checkpoint"),
    sqlite_autoincrement=True,
)
"""A row's ``branch`` and ``turn`` say which line of turns wrote it (``keel.checkpoints.branches``);
a turn's own message ``opens_turn``, and holds the turn's one slot on its branch, and names the
checkpoint its turn started from (``from_checkpoint``): messages sent from the same checkpoint are
the branches a client switches between."""

tool_results = sa.Table(
    "keel_tool_results",
    metadata,
    sa.Column("user_id", sa.String(200), primary_key=True),
    sa.Column("tool_call_id", sa.String(200), primary_key=True),
    sa.Column("tool_name", sa.String(100), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("content", sa.Text, nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
)

requests = sa.Table(
    "keel_requests",
    metadata,
    sa.Column("conversation_id", sa.String(36), primary_key=True),
    sa.Column("request_key", sa.String(200), primary_key=True),
    sa.Column("content_sha256", sa.String(64), nullable=False),
    sa.Column("result", sa.Text, nullable=True),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Index("ix_keel_requests_created", "conversation_id", "created_at"),
)
"""Messages sent with an idempotency key: the content's digest, and the turn result once known."""

health = sa.Table(
    "keel_health",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("checked_at", sa.DateTime(timezone=True), nullable=False),
)
"""One row, rewritten by every readiness check: a database that takes no writes is not ready."""

backups = sa.Table(
    "keel_backups",
    metadata,
    sa.Column("backup_id", sa.String(120), primary_key=True),
    sa.Column("conversation_id", sa.String(36), nullable=False),
    sa.Column("checkpoint_id", sa.String(64), nullable=False),
    sa.Column("reason", sa.String(64), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Index("ix_keel_backups_conversation", "conversation_id", "created_at"),
)

telegram_chats = sa.Table(
    "keel_telegram_chats",
    metadata,
    sa.Column("chat_id", sa.BigInteger, primary_key=True, autoincrement=False),
    sa.Column("telegram_user_id", sa.BigInteger, primary_key=True, autoincrement=False),
    sa.Column("conversation_id", sa.String(36), nullable=False),
    sa.Column("question_message_id", sa.BigInteger, nullable=True),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    sa.Index("ix_keel_telegram_chats_conversation", "conversation_id"),
)
"""Per Telegram chat and member: the active conversation, and the message whose Yes / No buttons
wait for an answer."""

telegram_answered = sa.Table(
    "keel_telegram_answered",
    metadata,
    sa.Column("chat_id", sa.BigInteger, primary_key=True, autoincrement=False),
    sa.Column("said", sa.String(100), primary_key=True),
    sa.Column("answered_at", sa.DateTime(timezone=True), nullable=False),
    sa.Index("ix_keel_telegram_answered_at", "answered_at"),
)
"""Per Telegram chat: the messages and button presses the bot answered (kept for a while)."""
