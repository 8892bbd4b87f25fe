"""The assistant node: one call of the chat model over the window, with the todo tools bound.

The model sees the system prompt, the earlier messages the context builder picked (one system
message), the current turn's window and, when the response node sent it back without a finished
answer, a short nudge naming what is still open.
"""

from __future__ import annotations

from typing import Any

import structlog
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.runtime import Runtime

from graphs.state import KeelState, open_items
from nodes.context import render_history
from nodes.logs import preview
from nodes.models import SYSTEM_PROMPT
from nodes.rule_model import NUDGE_PREFIX
from nodes.runtime import KeelContext

log = structlog.get_logger(__name__)


def nudge_text(state: KeelState) -> str:
    """The reminder sent when the last answer did not finish the task."""
    items = open_items(state.get("todolist"))
    lines = [f"- {i['description']}" for i in items]
    if lines:
        return f"{NUDGE_PREFIX} Open items:\n" + "\n".join(lines)
    return f"{NUDGE_PREFIX} If everything is handled, end with a line starting with DONE:."


def model_input(state: KeelState) -> list[BaseMessage]:
    """What the model is given: system prompt, window, and a nudge when one is due."""
    window = state.get("window", [])
    messages: list[BaseMessage] = [SystemMessage(SYSTEM_PROMPT)]
    history = render_history(state.get("history", []), bool(state.get("topic_changed")))
    if history:
        messages.append(SystemMessage(history))
    messages.extend(window)
    stopped_short = bool(window) and isinstance(window[-1], AIMessage) and not window[-1].tool_calls
    if state.get("nudges") and stopped_short:
        messages.append(HumanMessage(nudge_text(state)))
    return messages


async def assistant(state: KeelState, runtime: Runtime[KeelContext]) -> dict[str, Any]:
    """Ask the model for the next step."""
    reply = await runtime.context.agent_model().ainvoke(model_input(state))
    log.info(
        "assistant_replied",
        tool_calls=[c["name"] for c in reply.tool_calls],
        reply_preview=preview(reply.text),
    )
    return {"window": [reply]}
