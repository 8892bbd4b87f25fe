"""The plan node: the mission and its todolist.

No mission: the user's message becomes the mission. No todolist: one is made, one item per
request the run's tools recognise by their phrasings (``keel.tools.phrasings``; a single "answer"
item otherwise), with a new id each time.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import structlog
from langchain_core.tools import BaseTool
from langgraph.runtime import Runtime

from keel.nodes.support.context import KeelContext
from keel.nodes.support.previews import preview
from keel.nodes.support.state import KeelState, TodoItem, Todolist
from keel.tools.phrasings import parse_intents

log = structlog.get_logger(__name__)


def make_todolist(mission: str, tools: Sequence[BaseTool]) -> Todolist:
    """A fresh plan for ``mission``, one step per request ``tools`` recognise."""
    intents = parse_intents(mission, tools)
    items: list[TodoItem] = [
        {"id": n, "description": i.text, "tool": i.tool, "status": "pending"}
        for n, i in enumerate(intents, start=1)
    ]
    if not items:
        items = [
            {
                "id": 1,
                "description": f"Answer: {preview(mission, 80)}",
                "tool": None,
                "status": "pending",
            }
        ]
    return {"id": str(uuid.uuid4()), "items": items, "steps_completed": []}


def plan(state: KeelState, runtime: Runtime[KeelContext]) -> dict[str, Any]:
    """Set the mission and make a todolist when there is none."""
    update: dict[str, Any] = {}
    mission = state.get("mission")
    if mission is None:
        mission = state.get("content", "")
        update["mission"] = mission
        log.info("mission_set", mission_preview=preview(mission))
    if state.get("todolist") is None:
        todolist = make_todolist(mission, runtime.context.resources.tools)
        update["todolist"] = todolist
        log.info("todolist_created", todolist_id=todolist["id"], items=len(todolist["items"]))
    return update
