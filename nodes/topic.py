"""The topic_detect node: keeps track of the conversation's active topic segment.

A conversation always has an active topic; the first message opens one, titled with the first
words of that message.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import structlog

from graphs.state import KeelState, Topic

log = structlog.get_logger(__name__)

TITLE_WORDS = 5
TITLE_MAX_CHARS = 60


def topic_title(message: str) -> str:
    """The first five words of ``message`` (at most 60 characters), with "..." when it was cut."""
    words = message.split()
    title = " ".join(words[:TITLE_WORDS])
    if len(title) > TITLE_MAX_CHARS:
        return title[:TITLE_MAX_CHARS].rstrip() + "..."
    return f"{title}..." if len(words) > TITLE_WORDS else title or "(empty)"


def new_topic(message: str) -> Topic:
    """A fresh topic segment opened by ``message``."""
    return {
        "id": str(uuid.uuid4()),
        "title": topic_title(message),
        "started_at": datetime.now(UTC).isoformat(),
    }


def topic_detect(state: KeelState) -> dict[str, Any]:
    """Open the first topic when the conversation has none."""
    if state.get("topic"):
        return {}
    topic = new_topic(state.get("content", ""))
    log.info("topic_started", topic_id=topic["id"], title=topic["title"])
    return {"topic": topic}
