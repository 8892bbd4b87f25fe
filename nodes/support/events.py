"""What the graph reports: events for the caller, and the audit entries kept in state.

An event is ``{"type": ..., "data": {...}}``, written by a node on the graph's custom stream
(``runtime.stream_writer``, which does nothing outside a streaming run); the turn runner collects
the events into the turn result, and the CLI and the API show or stream them. The payloads of a
topic change and of a mission reset are built here once, for the nodes and the ``/reset`` command
alike, and audit entries are stamped with the run's clock.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal, TypedDict

from keel.nodes.support.state import AuditEntry

TopicReason = Literal["phrase", "time_gap", "user_reset", "returned"]
"""Why a topic changed: a switch or correction phrase, a silence, ``/reset``, or a return to an
earlier topic."""


class NodeEvent(TypedDict):
    """One event on the custom stream."""

    type: str
    data: dict[str, Any]


class TopicChanged(TypedDict):
    """The data of a ``topic_changed`` event."""

    previous_topic_id: str | None
    new_topic_id: str
    reason: TopicReason
    phrase: str | None
    title: str


class MissionReset(TypedDict):
    """The data of the ``state_updated`` event of a mission reset, and its audit detail."""

    mission_reset: bool
    reason: str
    previous_todolist_id: str | None


def event(kind: str, data: dict[str, Any]) -> NodeEvent:
    """An event of type ``kind``."""
    return {"type": kind, "data": data}


def topic_changed(
    previous_topic_id: str | None,
    new_topic_id: str,
    title: str,
    reason: TopicReason,
    phrase: str | None = None,
) -> NodeEvent:
    """The event of a new topic replacing ``previous_topic_id``."""
    data: TopicChanged = {
        "previous_topic_id": previous_topic_id,
        "new_topic_id": new_topic_id,
        "reason": reason,
        "phrase": phrase,
        "title": title,
    }
    return event("topic_changed", dict(data))


def mission_reset(
    reason: str, previous_todolist_id: str | None, at: datetime
) -> tuple[NodeEvent, AuditEntry]:
    """The event and the audit entry of clearing the mission and its todolist at ``at``."""
    data: MissionReset = {
        "mission_reset": True,
        "reason": reason,
        "previous_todolist_id": previous_todolist_id,
    }
    return event("state_updated", dict(data)), audit_entry("mission_reset", reason, dict(data), at)


def audit_entry(kind: str, reason: str, detail: dict[str, Any], at: datetime) -> AuditEntry:
    """One decision recorded in state at ``at`` (the run's clock)."""
    return {"at": at.isoformat(), "kind": kind, "reason": reason, "detail": detail}
