"""structlog set-up for keel's entry points (the CLI, the server), done once per process.

Console rendering on a terminal, JSON lines otherwise; ``KEEL_LOG_FORMAT`` (console | json) and
``KEEL_LOG_LEVEL`` override. A person watching a terminal gets one readable line a turn (what was
said, what keel answered, the tools it called) and every warning; ``KEEL_LOG_LEVEL=debug`` shows
every line, as JSON always does. Logs go to stderr so that a chat's stdout holds only the chat.
Context bound with ``structlog.contextvars`` (conversation_id, thread_id) is merged into every line.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import structlog

_configured = False


def configure_logging(level: str | None = None, fmt: str | None = None) -> None:
    """Configure structlog and the standard logging module (idempotent)."""
    global _configured
    if _configured:
        return
    from keel.graphs.settings import Settings  # loaded when logging is set up, not on import

    settings = Settings()
    level_name = (level or settings.log_level).upper()
    fmt = fmt or settings.log_format or ("console" if sys.stderr.isatty() else "json")
    numeric = logging.getLevelNamesMapping().get(level_name, logging.INFO)
    renderer: structlog.typing.Processor = structlog.processors.JSONRenderer()
    lines: list[structlog.typing.Processor] = []
    if fmt == "console":
        renderer = turn_lines if numeric > logging.DEBUG else structlog.dev.ConsoleRenderer()
        lines = [a_line_a_turn] if numeric > logging.DEBUG else []
    structlog.configure(
        processors=[
            *lines,
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


TURN_LINE = "turn_finished"
"""The one line of a turn a person at a terminal reads."""
_console = structlog.dev.ConsoleRenderer()


def a_line_a_turn(
    logger: Any, method: str, event: structlog.typing.EventDict
) -> structlog.typing.EventDict:
    """At a terminal, drop the info lines but a turn's own (warnings and errors all stay)."""
    if method in ("debug", "info") and event.get("event") != TURN_LINE:
        raise structlog.DropEvent
    return event


def turn_lines(logger: Any, method: str, event: structlog.typing.EventDict) -> str:
    """A turn as one line: when, the conversation, what was said and answered, the tools called;
    any other line as structlog's console renderer draws it.
    """  # noqa: D205
    if event.get("event") != TURN_LINE:
        return str(_console(logger, method, event))
    when = str(event.get("timestamp", ""))[11:19]
    conversation = str(event.get("conversation_id", ""))[:8]
    said = f"{event.get('message_preview', '')!r} -> {event.get('reply_preview', '')!r}"
    tools = ", ".join(event.get("tools") or [])
    done = "" if event.get("complete") else " (not complete)"
    return f"{when} {conversation} {said}{' · ' + tools if tools else ''}{done}"
