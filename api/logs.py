"""structlog set-up for keel's entry points (the CLI, the server), done once per process.

Console rendering on a terminal, JSON lines otherwise; ``KEEL_LOG_FORMAT`` (console | json) and
``KEEL_LOG_LEVEL`` override. Logs go to stderr so that a chat's stdout holds only the chat.
Context bound with ``structlog.contextvars`` (conversation_id, thread_id) is merged into every line.
"""

from __future__ import annotations

import logging
import sys

import structlog

from keel.graphs.settings import Settings

_configured = False


def configure_logging(level: str | None = None, fmt: str | None = None) -> None:
    """Configure structlog and the standard logging module (idempotent)."""
    global _configured
    if _configured:
        return
    settings = Settings()
    level_name = (level or settings.log_level).upper()
    fmt = fmt or settings.log_format or ("console" if sys.stderr.isatty() else "json")
    renderer: structlog.typing.Processor = (
        structlog.dev.ConsoleRenderer() if fmt == "console" else structlog.processors.JSONRenderer()
    )
    numeric = logging.getLevelNamesMapping().get(level_name, logging.INFO)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        cache_logger_on_first_use=True,
    )
    logging.basicConfig(level=max(numeric, logging.WARNING), stream=sys.stderr)
    _configured = True
