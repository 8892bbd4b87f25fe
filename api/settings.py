"""The server's settings: one pydantic-settings class read from ``KEEL_*`` variables.

It refuses unsafe combinations: without API keys the server serves everyone as the user
``local``, so it must bind to 127.0.0.1 only.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from checkpoints.urls import DEFAULT_DATABASE_URL

LOCAL_USER = "local"
LOOPBACK = "127.0.0.1"


class UnsafeSettings(ValueError):
    """The settings would expose the service without authentication."""


class Settings(BaseSettings):
    """How the HTTP server runs."""

    model_config = SettingsConfigDict(env_prefix="KEEL_", extra="ignore")

    database_url: str = Field(
        default=DEFAULT_DATABASE_URL, description="Checkpoints and app tables."
    )
    api_keys: str = Field(default="", description='"user1:key1,user2:key2"; empty: local use only.')
    host: str = Field(default=LOOPBACK, description="Address to bind.")
    port: int = Field(default=8000, ge=1, le=65535)
    max_message_chars: int = Field(default=32_000, ge=1, description="Longest message accepted.")
    double_text: Literal["reject", "enqueue"] = Field(
        default="reject", description="A message while a turn runs: 409 (reject) or wait (enqueue)."
    )
    enqueue_timeout_seconds: float = Field(
        default=120.0, gt=0, description="Longest wait for a busy conversation (enqueue)."
    )
    workers: int = Field(
        default=1, ge=1, description="Worker processes (``keel serve --workers``)."
    )
    db_pool_size: int | None = Field(
        default=None,
        ge=1,
        description="PostgreSQL connections per process, shared by checkpoints and keel's "
        "tables; default max(2, min(10, 80 // workers - 1)), within PostgreSQL's default 100.",
    )
    db_pool_timeout_seconds: float = Field(
        default=5.0, gt=0, description="Longest wait for a pooled connection; then 503."
    )

    @property
    def pool_size(self) -> int:
        """Connections per process (one more, outside the pool, holds the turn locks)."""
        return self.db_pool_size or max(2, min(10, 80 // self.workers - 1))

    @property
    def keys(self) -> dict[str, str]:
        """API key -> user id."""
        pairs: dict[str, str] = {}
        for item in filter(None, (p.strip() for p in self.api_keys.split(","))):
            user, sep, key = (part.strip() for part in item.partition(":"))
            if not sep or not user or not key:
                raise UnsafeSettings(f"KEEL_API_KEYS entry {user!r} is not user:key")
            if key in pairs:
                raise UnsafeSettings(
                    f"KEEL_API_KEYS gives users {pairs[key]!r} and {user!r} the same key; "
                    "every user needs a key of their own"
                )
            if user in pairs.values():
                raise UnsafeSettings(f"KEEL_API_KEYS names user {user!r} twice")
            pairs[key] = user
        return pairs

    @model_validator(mode="after")
    def _refuse_unsafe(self) -> Settings:
        if not self.keys and self.host != LOOPBACK:
            raise UnsafeSettings(
                f"KEEL_API_KEYS is empty: keel serves everyone as {LOCAL_USER!r} and binds to "
                f"{LOOPBACK} only (asked for {self.host}); set KEEL_API_KEYS to serve others"
            )
        return self
