"""Schema migrations of the app tables: ``upgrade`` brings a database to the newest revision.

The migration scripts live in ``checkpoints/migrations/versions`` (alembic). ``keel db upgrade``
and every process start (``open_database``) call ``upgrade``; on PostgreSQL an advisory lock makes
concurrent starts of several workers wait for one another instead of racing.
"""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

MIGRATIONS = Path(__file__).with_name("migrations")
ADVISORY_LOCK_ID = 0x6B65656C  # "keel"


def _config(connection: Connection) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


def _upgrade(connection: Connection) -> None:
    if connection.dialect.name == "postgresql":
        connection.execute(sa.text("SELECT pg_advisory_xact_lock(:id)"), {"id": ADVISORY_LOCK_ID})
    command.upgrade(_config(connection), "head")


def head_revision() -> str | None:
    """The newest revision the scripts define."""
    return ScriptDirectory(str(MIGRATIONS)).get_current_head()


async def upgrade(engine: AsyncEngine) -> None:
    """Apply every migration the database does not have yet."""
    async with engine.begin() as conn:
        await conn.run_sync(_upgrade)


async def current_revision(engine: AsyncEngine) -> str | None:
    """The revision the database is at (None before the first migration)."""
    async with engine.connect() as conn:
        return await conn.run_sync(lambda c: MigrationContext.configure(c).get_current_revision())
