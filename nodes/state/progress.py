"""Progress on the todolist: closing steps as tools run or the assistant finishes.

Called by tool_execution (a tool's step is done on success, skipped on an error or a "no") and by
response (answer steps close on the DONE marker). Todolists are never mutated in place.
"""

from __future__ import annotations

import copy

from keel.nodes.state.schema import ItemStatus, Todolist


def close_steps(
    todolist: Todolist,
    tool: str | None,
    status: ItemStatus,
    note: str | None = None,
    *,
    first_only: bool = False,
) -> Todolist:
    """Close the open steps carried out by ``tool``; the todolist is returned copied.

    A ``tool`` of ``"*"`` closes every open step, ``first_only`` only the first that matches;
    ``note``, when given, is set on each step closed.
    """
    updated = copy.deepcopy(todolist)
    for item in updated["items"]:
        if item["status"] in ("pending", "in_progress") and tool in ("*", item["tool"]):
            item["status"] = status
            if note:
                item["note"] = note
            if status == "done":
                updated["steps_completed"] = sorted({*updated["steps_completed"], item["id"]})
            if first_only:
                break
    return updated
