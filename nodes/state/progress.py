"""Progress on the todolist: closing steps as tools run or the assistant finishes.

Called by tool_execution (a tool's step is done on success, skipped on an error or a "no") and by
response (answer steps close on the DONE marker). Todolists are never mutated in place.
"""

from __future__ import annotations

import copy

from keel.nodes.state.schema import ItemStatus, Todolist


def close_step(
    todolist: Todolist | None, tool: str | None, status: ItemStatus, note: str | None = None
) -> Todolist | None:
    """Close the first open step carried out by ``tool``; the todolist is returned copied."""
    if todolist is None:
        return None
    updated = copy.deepcopy(todolist)
    for item in updated["items"]:
        if item["status"] in ("pending", "in_progress") and item["tool"] == tool:
            item["status"] = status
            if note:
                item["note"] = note
            if status == "done":
                updated["steps_completed"] = sorted({*updated["steps_completed"], item["id"]})
            break
    return updated


def close_open_steps(
    todolist: Todolist, tool: str | None, status: ItemStatus, note: str
) -> Todolist:
    """Close every open step carried out by ``tool`` (all open steps when ``tool`` is ``"*"``)."""
    updated = copy.deepcopy(todolist)
    for item in updated["items"]:
        if item["status"] in ("pending", "in_progress") and tool in ("*", item["tool"]):
            item["status"] = status
            item["note"] = note
            if status == "done":
                updated["steps_completed"] = sorted({*updated["steps_completed"], item["id"]})
    return updated
