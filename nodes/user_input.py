"""The user_input node: a user message arrives and a new turn begins.

It appends the message to the window, resets the per-turn counters and counts the turn. The graph
builder records the USER_INPUT state around it.
"""

from __future__ import annotations

from typing import Any

import structlog
from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from graphs.state import KeelState, bump
from nodes.logs import preview
from nodes.runtime import KeelContext

log = structlog.get_logger(__name__)


def user_input(state: KeelState, runtime: Runtime[KeelContext]) -> dict[str, Any]:
    """Start a turn with ``state["content"]``."""
    content = state.get("content", "")
    stats = bump(state.get("stats"), "turns")
    log.info("turn_started", turn=stats["turns"], message_preview=preview(content))
    return {
        "window": [HumanMessage(content)],
        "stats": stats,
        "loops": 0,
        "nudges": 0,
        "complete": False,
        "turn_over": False,
        "turn_note": None,
    }
