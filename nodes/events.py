"""Events a node publishes for the caller: ``{"type": ..., "data": {...}}`` on the custom stream.

Nodes call ``emit`` (LangGraph's ``get_stream_writer``); the turn runner collects the events into
the turn result, and the CLI / API show or stream them. Outside a streaming run ``emit`` does
nothing, so a node never fails for want of a listener.
"""

from __future__ import annotations

from typing import Any

from langgraph.config import get_stream_writer


def emit(event_type: str, data: dict[str, Any]) -> None:
    """Publish one event on the graph's custom stream."""
    try:
        writer = get_stream_writer()
    except RuntimeError:
        return
    writer({"type": event_type, "data": data})
