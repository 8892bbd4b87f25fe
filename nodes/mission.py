"""The reset node: a new message that meets a finished or abandoned plan starts a fresh mission.

When the todolist is complete, or the last turn ended without finishing it (the loop limit, the
time budget, a model that never said DONE), and no question is pending, the mission and the
todolist are cleared (every other field is kept) and a ``state_updated`` event says why; the plan
node then makes a new plan from the new message. The steps an unfinished turn left open stay in
the audit as not done. A message that answers the question the assistant asked (``ask_user``)
continues the mission: the answer is kept in ``answers`` (by question); a message that changed the
topic drops the question instead, and its mission with it. A mission belongs to the topic it was
made in: going back to another topic (the reopen_topic node) clears it too (``clear_mission``).
"""

from __future__ import annotations

from typing import Any

import structlog
from langgraph.runtime import Runtime

from keel.nodes.events import mission_reset
from keel.nodes.run_context import KeelContext
from keel.nodes.state.schema import KeelState, open_items, with_answer
from keel.nodes.support.previews import preview

log = structlog.get_logger(__name__)

REASON_COMPLETED = "completed_todolist_detected"
REASON_UNFINISHED = "unfinished_turn_abandoned"
REASON_REOPENED = "topic_reopened"


def has_reset_work(state: KeelState) -> bool:
    """A question waits for this message, or a plan (finished or abandoned) is in place: the
    reset node has something to do (else the graph goes past it).
    """  # noqa: D205
    return bool(state.get("pending_question")) or state.get("todolist") is not None


def reset(state: KeelState, runtime: Runtime[KeelContext]) -> dict[str, Any]:
    """Clear a finished or abandoned mission before a new query is planned (not for an answer)."""
    question = state.get("pending_question")
    if question and not state.get("topic_changed"):
        answer = state.get("request", "")
        log.info("question_answered", answer_preview=preview(answer))
        answers = with_answer(state.get("answers"), question, answer)
        return {"pending_question": None, "answers": answers}
    update: dict[str, Any] = {"pending_question": None} if question else {}
    todolist = state.get("todolist")
    if todolist is None:
        return update
    reason = REASON_UNFINISHED if open_items(todolist) else REASON_COMPLETED
    return {**update, **clear_mission(state, reason, runtime)}


def clear_mission(state: KeelState, reason: str, runtime: Runtime[KeelContext]) -> dict[str, Any]:
    """The update that clears the mission and its todolist for ``reason``, said by a
    ``state_updated`` event and an audit entry (which keeps the steps left not done).
    """  # noqa: D205
    todolist = state.get("todolist")
    abandoned = [i["description"] for i in open_items(todolist)]
    previous_id = todolist["id"] if todolist else None
    log.info(
        "resetting_mission_for_new_query",
        reason=reason,
        previous_mission_preview=preview(state.get("mission")),
        previous_todolist_id=previous_id,
        abandoned_steps=len(abandoned),
        new_query_preview=preview(state.get("request")),
    )
    event, entry = mission_reset(reason, previous_id, runtime.context.resources.clock())
    if abandoned:  # the audit keeps what the unfinished turn left not done
        entry["detail"] = {**entry.get("detail", {}), "abandoned_steps": abandoned}
    runtime.stream_writer(event)
    log.info("mission_reset_complete", previous_todolist_id=previous_id)
    return {"mission": None, "todolist": None, "audit": [entry]}
