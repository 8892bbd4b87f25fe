"""Parsing of ``KEEL_DATABASE_URL``: one URL names both the checkpointer and the app tables.

Accepted: ``memory``, ``sqlite:///relative/path``, ``sqlite:////absolute/path`` and
``postgresql://...`` (``postgres://`` too). Called by the checkpointer and database factories.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

ACCEPTED = "memory, sqlite:///PATH, postgresql://USER@HOST:PORT/DB"


def default_database_url(data_home: Path | None = None) -> str:
    """SQLite in the user's data directory, ``DATA_HOME/keel/keel.db`` (``XDG_DATA_HOME``, else
    ``~/.local/share``): one place per user, whatever folder a command runs in.
    """  # noqa: D205
    if data_home is None:
        try:
            data_home = Path.home() / ".local" / "share"
        except RuntimeError:  # no home directory at all: the folder keel runs in
            return "sqlite:///.keel/keel.db"
    return f"sqlite:///{data_home / 'keel' / 'keel.db'}"


class UnsupportedDatabaseURL(ValueError):
    """The URL's scheme is none of the accepted ones."""

    def __init__(self, url: str) -> None:
        """Name the URL (without credentials) and the accepted schemes."""
        shown = url.split("@")[-1] if "@" in url else url
        super().__init__(f"unsupported database URL {shown!r}; accepted: {ACCEPTED}")


@dataclass(frozen=True)
class DatabaseURL:
    """A parsed database URL."""

    kind: Literal["memory", "sqlite", "postgres"]
    raw: str
    path: Path | None = None
    """The SQLite file, for ``sqlite``."""

    @property
    def conninfo(self) -> str:
        """The libpq connection string, for ``postgres``."""
        return self.raw.replace("postgres://", "postgresql://", 1)


def parse_database_url(url: str) -> DatabaseURL:
    """Parse ``url`` into a DatabaseURL, or raise UnsupportedDatabaseURL."""
    url = url.strip()
    if url == "memory":
        return DatabaseURL("memory", url)
    if url.startswith("sqlite:///"):
        path = url.removeprefix("sqlite:///")
        if not path or path == ":memory:":
            raise UnsupportedDatabaseURL(url)
        return DatabaseURL("sqlite", url, Path(path))
    if url.startswith(("postgresql://", "postgres://")):
        return DatabaseURL("postgres", url)
    raise UnsupportedDatabaseURL(url)
