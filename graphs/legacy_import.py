"""Bringing a session of the older system into a conversation: its ``completed`` / ``processing``.

The older system kept a session's progress as two booleans; keel keeps the state machine's position.
``import_legacy_session`` maps the booleans with ``from_legacy`` (completed -> RESPONSE and
complete; else processing -> ASSISTANT; else USER_INPUT) and writes the result into the
conversation's checkpoint as the end of a turn, so the next message starts a turn as usual and a
reload reads the mapped state back. When the booleans disagree or are not booleans, the reason is
kept in the state's audit, stamped with the run's clock.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import structlog

from keel.graphs.builder import KeelGraph, ending_node
from keel.graphs.resources import prepared
from keel.graphs.result import Snapshot
from keel.graphs.runner import snapshot, thread_config
from keel.nodes.events import audit_entry
from keel.nodes.run_context import KeelContext
from keel.nodes.state.machine import AgentState
from keel.nodes.state.schema import AuditEntry, KeelState

log = structlog.get_logger(__name__)

LEGACY_FLAGS = ("completed", "processing")


def from_legacy(legacy: dict[str, Any]) -> tuple[KeelState, AuditEntry | None]:
    """Map a legacy record with ``completed`` / ``processing`` booleans to a state.

    completed -> RESPONSE and complete; else processing -> ASSISTANT; else USER_INPUT. The mapping
    is deterministic; when the booleans disagree (both true) or are not booleans, the reason is
    returned as an audit entry.
    """
    completed, processing = legacy.get("completed"), legacy.get("processing")
    reasons = []
    if completed and processing:
        reasons.append("completed and processing both set; completed wins")
    for name, value in (("completed", completed), ("processing", processing)):
        if value is not None and not isinstance(value, bool):
            reasons.append(f"{name}={value!r} is not a boolean; read as {bool(value)}")
    if completed:
        state: KeelState = {"agent_state": AgentState.RESPONSE.value, "complete": True}
    elif processing:
        state = {"agent_state": AgentState.ASSISTANT.value, "complete": False}
    else:
        state = {"agent_state": AgentState.USER_INPUT.value, "complete": False}
    audit: AuditEntry | None = None
    if reasons:
        audit = {"kind": "legacy_mapping", "reason": "; ".join(reasons), "detail": dict(legacy)}
    return state, audit


async def import_legacy_session(
    graph: KeelGraph, conversation_id: str, legacy: Mapping[str, Any], context: KeelContext
) -> Snapshot:
    """Write the state a legacy session maps to into the conversation; return its snapshot."""
    flags = {name: legacy[name] for name in LEGACY_FLAGS if name in legacy}
    state, audit = from_legacy(flags)
    update: dict[str, Any] = {**state, "turn_over": True}
    if audit is not None:
        at = (await prepared(context)).resources.clock()
        update["audit"] = [audit_entry(audit["kind"], audit["reason"], audit["detail"], at)]
        log.warning("legacy_session_ambiguous", reason=audit["reason"])
    await graph.aupdate_state(thread_config(conversation_id), update, as_node=ending_node(graph))
    log.info("legacy_session_imported", agent_state=state["agent_state"], ambiguous=bool(audit))
    return await snapshot(graph, conversation_id)
