"""The plan node: the mission and its todolist.

No mission: the user's message becomes the mission. No todolist: one is made by the planner
(``keel.nodes.support.planner``): by the model as structured output when a real model is
configured, else (or when its plan is unusable) one item per request the run's tools recognise by
their phrasings, with a new id each time. Small talk is no mission (``subject_of``): it sets
neither. A provider that refuses to plan is reported with a
``model_fallback`` event (``step``: plan).
"""

from __future__ import annotations

import uuid
from typing import Any

import structlog
from langgraph.runtime import Runtime

from keel.nodes.events import model_fallback
from keel.nodes.run_context import KeelContext
from keel.nodes.state.schema import KeelState, Todolist
from keel.nodes.support.planner import model_steps, phrase_steps
from keel.nodes.support.previews import preview
from keel.nodes.support.topic_names import subject_of

log = structlog.get_logger(__name__)


async def make_todolist(mission: str, runtime: Runtime[KeelContext]) -> Todolist:
    """A fresh plan for ``mission``: the model's when it gives a usable one, else the phrasings'."""
    resources = runtime.context.resources
    items = None
    if resources.plan_model is not None:
        items, failed = await model_steps(
            mission, resources.plan_model, resources.tools, resources.plan_method
        )
        if failed is not None:
            event = model_fallback(failed.reason, failed.status, failed.detail, step="plan")
            runtime.stream_writer(event)
    source = "model" if items else "phrasings"
    items = items or phrase_steps(mission, resources.tools)
    log.info("todolist_planned", source=source, items=len(items))
    return {"id": str(uuid.uuid4()), "items": items, "steps_completed": []}


async def plan(state: KeelState, runtime: Runtime[KeelContext]) -> dict[str, Any]:
    """Set the mission and make a todolist when there is none.

    Small talk ("hey there", "thanks!", a bare "yes") is no mission: it sets neither, and the
    next message with a subject is planned.
    """
    update: dict[str, Any] = {}
    mission = state.get("mission")
    if mission is None:
        mission = state.get("request", "")
        if subject_of(mission, runtime.context.resources.tools) is None:
            log.info("no_mission", request_preview=preview(mission))
            return update
        update["mission"] = mission
        log.info("mission_set", mission_preview=preview(mission))
    if state.get("todolist") is None:
        if "mission" not in update:
            log.warning("todolist_missing", mission_preview=preview(mission))
        todolist = await make_todolist(mission, runtime)
        update["todolist"] = todolist
        log.info("todolist_created", todolist_id=todolist["id"], items=len(todolist["items"]))
    return update
