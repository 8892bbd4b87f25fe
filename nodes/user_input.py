"""The user_input node: a user message arrives and a new turn begins.

It opens a fresh window holding only the message (earlier turns live in the message log), resets
the per-turn counters and counts the turn. The message id is derived from the turn number, so a
re-run writes the same message, never a second one. The graph builder records USER_INPUT.
"""

from __future__ import annotations

from typing import Any

import structlog
from langchain_core.messages import HumanMessage, RemoveMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.runtime import Runtime

from graphs.state import KeelState, bump
from nodes.logs import preview
from nodes.runtime import KeelContext, conversation_id

log = structlog.get_logger(__name__)


def user_input(state: KeelState, runtime: Runtime[KeelContext]) -> dict[str, Any]:
    """Start a turn with ``state["content"]``."""
    content = state.get("content", "")
    stats = bump(state.get("stats"), "turns")
    log.info("turn_started", turn=stats["turns"], message_preview=preview(content))
    return {
        "window": [
            RemoveMessage(id=REMOVE_ALL_MESSAGES),
            HumanMessage(content, id=f"{conversation_id()}:turn-{stats['turns']}:user"),
        ],
        "stats": stats,
        "loops": 0,
        "nudges": 0,
        "complete": False,
        "turn_over": False,
        "turn_note": None,
    }
