"""keel's settings: one pydantic-settings class, read from ``KEEL_*`` (and ``OPENAI_*``) variables.

They are set in the environment or written in a ``.env`` file in the folder a command runs in.

Every entry point reads it here and nowhere else: ``keel serve``, ``keel chat``, ``keel db`` and the
graph itself when a LangGraph server runs it (``keel.graphs.resources``). The graph's tunables are
the defaults of a run; a run's context may override them
(``keel.nodes.run_context.KeelContext``).

``for_serving`` refuses unsafe combinations: without API keys the server serves everyone as the user
``local``, so it must bind to 127.0.0.1 only.
"""

from __future__ import annotations

import re
from functools import cached_property
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import (
    BaseSettings,
    DotEnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from keel.checkpoints.retention import DEFAULT_KEEP
from keel.checkpoints.urls import default_database_url
from keel.graphs.api_keys import UnsafeSettings, parse_api_keys
from keel.graphs.model_settings import ModelSettings
from keel.nodes.models.chat import ModelLimits
from keel.nodes.run_context import LOCAL_USER, Tunables
from keel.tools.tasks.base import REMINDERS_MAX

LOOPBACK = "127.0.0.1"
ENV_FILE = ".env"
"""Read by every command from the folder it runs in, as ``langgraph dev`` reads it; a variable
set in the environment wins over the same one in the file."""
DEFAULT_TOOLS = "keel.tools.tasks.todo:TODO_TOOLS"


class Settings(BaseSettings, ModelSettings, Tunables):
    """How keel runs: the database, the HTTP server, the model (``ModelSettings``), and the
    graph's ``Tunables``.
    """  # noqa: D205

    model_config = SettingsConfigDict(
        env_prefix="KEEL_", env_file=ENV_FILE, extra="ignore", populate_by_name=True
    )

    env_file: str = Field(
        default=ENV_FILE,
        description="The dotenv file read besides the environment, from the folder a command "
        "runs in (``KEEL_ENV_FILE``; empty: none). Set only in the environment.",
    )
    data_home: Path | None = Field(
        default=None,
        validation_alias=AliasChoices("XDG_DATA_HOME"),
        description="The user's data directories (``XDG_DATA_HOME``; default ~/.local/share; "
        "an empty or relative one counts as unset, as the XDG specification says).",
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """The environment, then the dotenv file ``KEEL_ENV_FILE`` names (``.env``; none when
        empty): what is set in the environment wins.
        """  # noqa: D205
        named = env_settings().get("env_file", ENV_FILE)
        if not named:
            return init_settings, env_settings, file_secret_settings
        if named == ENV_FILE:
            return init_settings, env_settings, dotenv_settings, file_secret_settings
        return (
            init_settings,
            env_settings,
            DotEnvSettingsSource(settings_cls, env_file=named),
            file_secret_settings,
        )

    @field_validator("data_home", mode="before")
    @classmethod
    def _absolute_only(cls, value: object) -> object:
        """An empty or relative XDG_DATA_HOME is ignored (the XDG Base Directory rule)."""
        if isinstance(value, str) and not Path(value).is_absolute():
            return None
        return value

    database_url: str = Field(
        default_factory=lambda data: default_database_url(data.get("data_home")),
        description="Checkpoints and app tables; default: SQLite in the user's data directory.",
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
    checkpoint_keep: int = Field(
        default=DEFAULT_KEEP, ge=1, description="Checkpoints kept per conversation."
    )
    reminders_per_user: int = Field(
        default=REMINDERS_MAX,
        ge=1,
        description="Reminders to come a user may hold; past that, a time of day is refused.",
    )
    reminder_poll_seconds: float = Field(
        default=1.0,
        ge=0,
        le=60,
        description="How often a serving process asks the database which reminders fell due "
        "(0: it delivers none; another process does).",
    )
    max_connections: int = Field(
        default=1000,
        ge=1,
        description="Open connections a server process holds (a slow or half-sent request "
        "counts); past it a new one is answered 503.",
    )
    keep_alive_seconds: int = Field(
        default=5,
        ge=1,
        description="A connection with no request under way (before its first one, or between "
        "two) is closed after this long.",
    )
    header_timeout_seconds: float = Field(
        default=10.0,
        gt=0,
        description="A request's line and headers must all arrive within this long of its first "
        "byte; else it is answered 408 and its connection closed.",
    )
    body_timeout_seconds: float = Field(
        default=30.0,
        gt=0,
        description="A request's body must all arrive within this long of its headers; else it is "
        "answered 408 and its connection closed.",
    )
    max_body_bytes: int | None = Field(
        default=None,
        ge=1024,
        description="Largest request body (and WebSocket message) taken, checked before it is "
        "read; larger is answered 413. Default: 1 MiB, or more if KEEL_MAX_MESSAGE_CHARS needs it.",
    )
    allowed_hosts: str = Field(
        default="",
        description="With no API keys: names besides 127.0.0.1, localhost, [::1] and KEEL_HOST "
        'that the Host header may carry ("keel.lan,proxy.internal"); any other answers 421.',
    )
    metrics_dir: str | None = Field(
        default=None,
        validation_alias=AliasChoices("PROMETHEUS_MULTIPROC_DIR"),
        description="Where the workers of one server count their metrics together "
        "(``keel serve --workers N`` makes one).",
    )
    tiktoken_cache_dir: str | None = Field(
        default=None,
        validation_alias=AliasChoices("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"),
        description="Where tiktoken keeps its encoding files (unset: the temporary folder's "
        "data-gym-cache); keel counts tokens with tiktoken only when the file is there.",
    )
    ws_idle_seconds: float = Field(
        default=600.0, gt=0, description="A WebSocket silent this long is closed (code 1001)."
    )
    ws_per_user: int = Field(
        default=20,
        ge=1,
        description="Open WebSockets a user may have on one server (its workers together).",
    )

    telegram_token: SecretStr | None = Field(
        default=None, description="The Telegram bot's token (from BotFather): ``keel telegram``."
    )
    telegram_api_url: str = Field(
        default="https://api.telegram.org",
        description="The Bot API server; requests go to {url}/bot{token}/{method}.",
    )
    telegram_allowed_users: str = Field(
        default="",
        description='Telegram user ids the bot answers ("123,456"); empty: everyone.',
    )
    telegram_webhook_secret: SecretStr | None = Field(
        default=None,
        description="With the token: ``keel serve`` takes Telegram's updates at /telegram/webhook, "
        "each carrying this secret token (1 to 256 of A-Z, a-z, 0-9, _ and -).",
    )

    log_level: str = Field(default="info", description="debug, info, warning or error.")
    log_format: Literal["console", "json"] | None = Field(
        default=None, description="Log lines as console text or JSON; default: console on a tty."
    )

    topic_shift_threshold: float = Field(
        default=0.4,
        ge=0,
        le=1,
        description="The shift network's probability (0 to 1) from which a message that no "
        "longer follows the topic starts a new one; 1 turns the semantic signal off.",
    )
    topic_return_threshold: float = Field(
        default=0.35,
        ge=-1,
        le=1,
        description="Similarity (cosine) to a closed topic's summary from which a shift goes back "
        "to that topic instead of opening a new one.",
    )
    tools: str = Field(
        default=DEFAULT_TOOLS,
        description='The tools the agent may call, as "module:attribute" naming a list of '
        "LangChain tools; every client of the process (HTTP, MCP, Telegram, keel chat, a "
        "LangGraph server) gets the same list.",
    )
    pause_at: str | None = Field(
        default=None,
        description="Crash tests only: the process stops for good at this named point.",
    )

    @field_validator("telegram_webhook_secret")
    @classmethod
    def _secret_token(cls, value: SecretStr | None) -> SecretStr | None:
        """Telegram takes 1 to 256 characters of A-Z, a-z, 0-9, _ and - as a secret token."""
        if value is not None and not re.fullmatch(
            r"[A-Za-z0-9_-]{1,256}", value.get_secret_value()
        ):
            raise ValueError("KEEL_TELEGRAM_WEBHOOK_SECRET: 1 to 256 of A-Z, a-z, 0-9, _ and -")
        return value

    @property
    def model_limits(self) -> ModelLimits:
        """What bounds and shapes every model request: its timeout, retries, answer length,
        temperature and whether it is streamed.
        """  # noqa: D205
        return ModelLimits(
            self.model_timeout_seconds,
            self.model_retries,
            self.max_tokens,
            self.model_temperature,
            self.model_streaming,
        )

    @property
    def pool_size(self) -> int:
        """Connections per process (one more, outside the pool, holds the turn locks)."""
        return self.db_pool_size or max(2, min(10, 80 // self.workers - 1))

    @property
    def body_limit(self) -> int:
        """Largest request body in bytes: room for a message of ``max_message_chars`` at least."""
        # one character is at most 12 bytes of JSON (an emoji as two escapes), plus the rest
        return self.max_body_bytes or max(1 << 20, 12 * self.max_message_chars + (64 << 10))

    @property
    def host_names(self) -> frozenset[str]:
        """Names the Host header may carry when no keys are set (lower case, no port)."""
        extra = (name.strip().lower().strip("[]") for name in self.allowed_hosts.split(","))
        return frozenset({"127.0.0.1", "localhost", "::1", self.host.lower(), *filter(None, extra)})

    @property
    def telegram_users(self) -> frozenset[int] | None:
        """The Telegram user ids the bot answers; None: everyone."""
        ids = [part.strip() for part in self.telegram_allowed_users.split(",") if part.strip()]
        try:
            return frozenset(int(i) for i in ids) if ids else None
        except ValueError:
            raise ValueError(
                f"KEEL_TELEGRAM_ALLOWED_USERS must be Telegram user ids (numbers): {ids}"
            ) from None

    @cached_property
    def keys(self) -> dict[str, str]:
        """API key -> user id (read once; ``UnsafeSettings`` when malformed)."""
        return parse_api_keys(self.api_keys)

    def for_serving(self) -> Settings:
        """These settings, checked for serving: malformed keys, or no keys off loopback, refused.

        Only the server checks them; the chat, ``keel db`` and the graph read the same settings
        whatever host the server is told to bind.

        Raises:
            UnsafeSettings: what is wrong.
        """
        if not self.keys and self.host != LOOPBACK:
            raise UnsafeSettings(
                f"KEEL_API_KEYS is empty: keel serves everyone as {LOCAL_USER!r} and binds to "
                f"{LOOPBACK} only (asked for {self.host}); set KEEL_API_KEYS to serve others"
            )
        return self
