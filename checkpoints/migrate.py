"""Schema migrations of the app tables: ``upgrade`` brings a database to the newest revision.

The migration scripts live in ``checkpoints/migrations/versions`` (alembic, on a short-lived
synchronous SQLAlchemy connection run in a worker thread, off the event loop). ``keel db upgrade``
and every process start (``open_backend``) call ``upgrade``; on PostgreSQL an advisory lock makes
concurrent starts of several workers wait for one another instead of racing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Connection
from sqlalchemy.pool import NullPool

from keel.checkpoints.urls import DatabaseURL

MIGRATIONS = Path(__file__).with_name("migrations")
ADVISORY_LOCK_ID = 0x6B65656C  # "keel"


def migration_engine(db: DatabaseURL, creator: Callable[[], Any] | None = None) -> sa.Engine:
    """A synchronous engine for migrations (``creator`` opens the in-memory database)."""
    if db.kind == "postgres":
        url = db.conninfo.replace("postgresql://", "postgresql+psycopg://", 1)
        return sa.create_engine(url, poolclass=NullPool)
    if db.kind == "sqlite":
        return sa.create_engine(f"sqlite:///{db.path}", poolclass=NullPool)
    if creator is None:
        raise ValueError("an in-memory database is migrated through its own connection")
    return sa.create_engine("sqlite://", creator=creator, poolclass=NullPool)


def _config(connection: Connection) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


def upgrade_sync(engine: sa.Engine) -> None:
    """Apply every migration the database does not have yet (blocking)."""
    with engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            connection.execute(
                sa.text("SELECT pg_advisory_xact_lock(:id)"), {"id": ADVISORY_LOCK_ID}
            )
        command.upgrade(_config(connection), "head")


def revision_sync(engine: sa.Engine) -> str | None:
    """The revision the database is at (None before the first migration; blocking)."""
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def head_revision() -> str | None:
    """The newest revision the scripts define."""
    return ScriptDirectory(str(MIGRATIONS)).get_current_head()


async def upgrade(engine: sa.Engine) -> None:
    """Apply every migration the database does not have yet, in a worker thread."""
    await asyncio.to_thread(upgrade_sync, engine)
