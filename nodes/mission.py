"""The reset node: a new message that meets a finished plan starts a fresh mission.

When the todolist is complete and no question is pending, the mission and the todolist are
cleared (every other field is kept) and a ``state_updated`` event says so; the plan node then
makes a new plan from the new message. A message that answers the question the assistant ended
its last turn on continues the mission: the answer is kept in ``answers`` (by question); a message
that changed the topic drops the question instead.
"""

from __future__ import annotations

from typing import Any

import structlog
from langgraph.runtime import Runtime

from keel.nodes.support.context import KeelContext
from keel.nodes.support.events import mission_reset
from keel.nodes.support.previews import preview
from keel.nodes.support.state import KeelState, is_plan_complete, with_answer

log = structlog.get_logger(__name__)

REASON_COMPLETED = "completed_todolist_detected"


def reset(state: KeelState, runtime: Runtime[KeelContext]) -> dict[str, Any]:
    """Clear a completed mission before a new query is planned (not when answering a question)."""
    question = state.get("pending_question")
    if question and not state.get("topic_changed"):
        answer = state.get("content", "")
        log.info("question_answered", answer_preview=preview(answer))
        answers = with_answer(state.get("answers"), question, answer)
        return {"pending_question": None, "answers": answers}
    update: dict[str, Any] = {"pending_question": None} if question else {}
    todolist = state.get("todolist")
    if todolist is None:
        if state.get("mission"):
            log.warning("todolist_missing", mission_preview=preview(state.get("mission")))
        return update
    if not is_plan_complete(todolist):
        return update
    previous_id = todolist["id"]
    log.info(
        "resetting_mission_for_new_query",
        previous_mission_preview=preview(state.get("mission")),
        previous_todolist_id=previous_id,
        new_query_preview=preview(state.get("content")),
    )
    event, entry = mission_reset(REASON_COMPLETED, previous_id, runtime.context.resources.clock())
    runtime.stream_writer(event)
    log.info("mission_reset_complete", previous_todolist_id=previous_id)
    return {**update, "mission": None, "todolist": None, "audit": [entry]}
