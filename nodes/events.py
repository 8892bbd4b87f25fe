"""What the graph reports, made: one builder per event, which every producer calls, and the
audit entries kept in state.

A node writes an event on the graph's custom stream (``runtime.stream_writer``, which does nothing
outside a streaming run); the turn runner collects the events into the turn result, and the CLI
and the API show or stream them. Their types are in ``keel.nodes.event_types``; audit entries are
stamped with the run's clock.
"""  # noqa: D205

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from keel.nodes.event_types import (
    LoopLimitEvent,
    MissionResetData,
    ModelFallbackData,
    ModelFallbackEvent,
    ResumedData,
    ResumedEvent,
    RoundStartedEvent,
    StateUpdatedEvent,
    TokenEvent,
    ToolCallData,
    ToolCallEvent,
    TopicChangedData,
    TopicChangedEvent,
    TopicReason,
    TurnStoppedEvent,
    TurnTimedOutEvent,
)
from keel.nodes.state.schema import AuditEntry


def topic_changed(
    previous_topic_id: str | None,
    new_topic_id: str,
    title: str,
    reason: TopicReason,
    phrase: str | None = None,
) -> TopicChangedEvent:
    """The event of a new topic replacing ``previous_topic_id``."""
    data: TopicChangedData = {
        "previous_topic_id": previous_topic_id,
        "new_topic_id": new_topic_id,
        "reason": reason,
        "phrase": phrase,
        "title": title,
    }
    return {"type": "topic_changed", "data": data}


def mission_reset(
    reason: str, previous_todolist_id: str | None, at: datetime
) -> tuple[StateUpdatedEvent, AuditEntry]:
    """The event and the audit entry of clearing the mission and its todolist at ``at``."""
    data: MissionResetData = {
        "mission_reset": True,
        "reason": reason,
        "previous_todolist_id": previous_todolist_id,
    }
    event: StateUpdatedEvent = {"type": "state_updated", "data": data}
    return event, audit_entry("mission_reset", reason, dict(data), at)


def tool_called(
    name: str, args: dict[str, Any], result: Any, text: str | None = None
) -> ToolCallEvent:
    """The event of the tool ``name`` having run with ``args`` and returned ``result``."""
    data: ToolCallData = {"name": name, "args": args, "result": result, "text": text}
    return {"type": "tool_call", "data": data}


def resumed(step: int, description: str, reason: str, backup_id: str | None) -> ResumedEvent:
    """The event of a fresh window opened (for ``reason``) to continue from ``step``."""
    data: ResumedData = {
        "step": step,
        "description": description,
        "reason": reason,
        "backup_id": backup_id,
    }
    return {"type": "resumed", "data": data}


def loop_limit(loops: int, limit: int, open_items: list[str]) -> LoopLimitEvent:
    """The event of a turn ended after ``loops`` rounds, ``open_items`` left open."""
    return {
        "type": "loop_limit",
        "data": {"loops": loops, "limit": limit, "open_items": open_items},
    }


def turn_stopped(loops: int) -> TurnStoppedEvent:
    """The event of a turn stopped by its caller after ``loops`` rounds."""
    return {"type": "turn_stopped", "data": {"loops": loops}}


def model_fallback(
    reason: str, status: int | None, detail: str, step: Literal["answer", "plan"] = "answer"
) -> ModelFallbackEvent:
    """The event of the provider's answer (or plan) replaced by the offline one, for ``reason``."""
    data: ModelFallbackData = {"reason": reason, "status": status, "detail": detail, "step": step}
    return {"type": "model_fallback", "data": data}


def turn_timed_out(seconds: int, open_items: list[str]) -> TurnTimedOutEvent:
    """The event of a turn ended by its time budget, ``open_items`` left open."""
    return {"type": "turn_timed_out", "data": {"seconds": seconds, "open_items": open_items}}


def round_started(round_: int, attempt: int) -> RoundStartedEvent:
    """The event of a model call starting (round ``round_``, attempt ``attempt``)."""
    return {"type": "round_started", "data": {"round": round_, "attempt": attempt}}


def token(text: str) -> TokenEvent:
    """The event of the model having written ``text``."""
    return {"type": "token", "data": {"text": text}}


def audit_entry(kind: str, reason: str, detail: dict[str, Any], at: datetime) -> AuditEntry:
    """One decision recorded in state at ``at`` (the run's clock)."""
    return {"at": at.isoformat(), "kind": kind, "reason": reason, "detail": detail}
