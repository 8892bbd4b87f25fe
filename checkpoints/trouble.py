"""What a database error says about the database: read-only, full, or away (or nothing).

``trouble_of(exc)`` is the one place that tells a database that cannot serve right now from a
query that went wrong, for every driver keel speaks to (sqlite3, psycopg and its pool). The API
answers a trouble with a 503, its code and its ``message``; the MCP endpoint with a retryable
error; the turn, the tools and the chat retry the work (or leave a cut-off turn for later) instead
of giving it up. Anything else (None) is a failure of the work itself.
"""

from __future__ import annotations

import sqlite3
from enum import StrEnum

import psycopg
import psycopg_pool


class Trouble(StrEnum):
    """A way the database cannot serve; each value is the error code clients see."""

    READ_ONLY = "database_read_only"
    FULL = "database_full"
    UNAVAILABLE = "database_unavailable"

    @property
    def message(self) -> str:
        """What a client is told of it (never the database's own words)."""
        return MESSAGES[self]


DATABASE_DOWN = (
    "the database is unavailable; retry soon. A message may have run: retry it with the same "
    "Idempotency-Key to have it run at most once"
)
MESSAGES = {
    Trouble.READ_ONLY: "the database is read-only: nothing can be saved until it is writable again",
    Trouble.FULL: "the database's disk is full: nothing can be saved until there is room",
    Trouble.UNAVAILABLE: DATABASE_DOWN,
}


SQLITE_BUSY = (
    "database is locked",
    "database is busy",
    "unable to open database",
    "disk i/o error",
)
SQLITE_READ_ONLY = ("readonly database",)
SQLITE_FULL = ("database or disk is full",)


def _sqlite_trouble(text: str) -> Trouble | None:
    if any(t in text for t in SQLITE_READ_ONLY):
        return Trouble.READ_ONLY
    if any(t in text for t in SQLITE_FULL):
        return Trouble.FULL
    if any(t in text for t in SQLITE_BUSY):
        return Trouble.UNAVAILABLE
    return None


def trouble_of(exc: BaseException) -> Trouble | None:
    """How the database cannot serve, by ``exc``; None when the error is not about that.

    Not None: the database cannot serve right now, and the same work may well succeed later.

    Unreachable, busy or out of pooled connections (``PoolTimeout``) is ``UNAVAILABLE``; a query
    the database refused for what it says (no such table, a broken constraint) is None.
    """
    if isinstance(exc, sqlite3.OperationalError):
        return _sqlite_trouble(str(exc).lower())
    if isinstance(exc, psycopg.errors.ReadOnlySqlTransaction):
        return Trouble.READ_ONLY
    if isinstance(exc, psycopg.errors.DiskFull):
        return Trouble.FULL
    if isinstance(exc, psycopg.OperationalError | psycopg_pool.PoolTimeout):
        return Trouble.UNAVAILABLE
    if isinstance(exc, ConnectionError | OSError) and not isinstance(exc, FileNotFoundError):
        return Trouble.UNAVAILABLE
    return None
