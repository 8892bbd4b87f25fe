"""The todo tools that act on lists: move a task to another list or place, clear a whole list.

Declared with ``keel_tool`` as the other todo tools are (``keel.tools.tasks.changes``); what a
list is and how its name is read is the ``LIST`` field's (``keel.checkpoints.task_fields``). The
one list of the tools is ``keel.tools.tasks.todo.TODO_TOOLS``.
"""

from __future__ import annotations

from typing import Any

from keel.checkpoints.list_fields import TODO_LIST, list_name
from keel.checkpoints.task_fields import ListName, Place
from keel.checkpoints.times import FieldError
from keel.tools.confirm import Confirm
from keel.tools.spec import keel_tool
from keel.tools.tasks.arguments import Store, TaskId, UserId
from keel.tools.tasks.pages import task_extras
from keel.tools.tasks.store import TaskError, TaskStore


def _the_list(name: Any) -> str:
    """A list as a question names it: "the shopping list" ("the todo list" for none)."""
    try:
        return f"the {list_name(str(name or ''))} list"
    except FieldError:
        return f"the list “{str(name)[:60]}”"


@keel_tool(
    mutates=True,
    intent="move",
    examples=[
        "move {task} to the {list} list",
        "move {task} to my {list} list",
        "put {task} on the {list} list instead",
        "{task} belongs on the {list} list",
        "move {task} {place}",
        "put {task} {place}",
        "bump {task} {place}",
        "make {task} {place}",
        "move {task} {place} of the list",
        "{task} is {urgent}",
    ],
    reply=lambda task: (
        f"Moved task {task['id']}: {task['title']}{task_extras(task, listed=True)}, {_where(task)}"
    ),
    said=lambda task: f"Moved task {task['id']}: {task['title']}, {_where(task)}",
    example='move one ("Move task 2 to the top", "Move eggs to the shopping list")',
    step="Move {task}",
    on_request=True,
)
async def move_todo_task(
    task_id: TaskId,
    user_id: UserId,
    store: Store,
    list: ListName = None,  # noqa: A002 - the argument as people and models name it
    place: Place = None,
) -> dict[str, Any]:
    """Move a task to another list, or to a place in its list (the top for something urgent)."""
    return await store.move(user_id, task_id, list, place)


async def _held_on_list(store: TaskStore, user_id: str, args: dict[str, Any]) -> dict[str, Any]:
    """How many tasks the list a clear acts on holds ("3 tasks"); raises ``TaskError`` when there
    is nothing to ask about (no task on it, or no list by that name).
    """  # noqa: D205
    words = args.get("list")
    held = await store.count(user_id, list_=store.list_named(words) or TODO_LIST)  # as clear
    if not held:
        raise TaskError("nothing_to_clear", f"There is nothing on {_the_list(words)} to clear.")
    return {"title": _tasks(held)}


@keel_tool(
    mutates=True,
    confirm=Confirm(
        "clear", "cleared", target="list", noun="list", named=_the_list, probe=_held_on_list
    ),
    intent="clear",
    examples=[
        "clear my {list} list",
        "clear the {list} list",
        "empty my {list} list",
        "delete my {list} list",
        "delete the {list} list",
        "throw away the {list} list",
        "get rid of my {list} list",
        "wipe my {list} list",
        "clear my list",
        "clear the list",
        "empty my list",
        "delete everything on my {list} list",
        "start my {list} list over",
    ],
    reply=lambda done: f"Cleared the {done['list']} list: {_tasks(done['deleted'])} deleted.",
    said=lambda done: f"Cleared the {done['list']} list ({_tasks(done['deleted'])})",
    example='clear a whole list ("Clear my shopping list")',
    step="Clear the {list} list",
    on_request=True,
)
async def clear_todo_list(
    user_id: UserId,
    store: Store,
    list: ListName = None,  # noqa: A002 - the argument as people and models name it
) -> dict[str, Any]:
    """Delete every task on a list (none named: the todo list)."""
    return await store.clear(user_id, list)


def _where(task: dict[str, Any]) -> str:
    """Where a moved task stands: "now at the top of the shopping list", "now 2nd of 5 on …"."""
    place, of, name = task.get("place", 1), task.get("of", 1), f"the {task['list']} list"
    if of == 1:
        return f"now the only task on {name}"
    if place == 1:
        return f"now at the top of {name}"
    if place == of:
        return f"now at the bottom of {name}"
    return f"now {_ordinal(place)} of {of} on {name}"


def _ordinal(n: int) -> str:
    """``n`` as a place: 1st, 2nd, 3rd, 4th, 11th, 22nd."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _tasks(n: int) -> str:
    return f"{n:,} task" + ("" if n == 1 else "s")
