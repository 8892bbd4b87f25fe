"""The todo tools: what the agent may do with a user's tasks, each declared once.

Each tool is an async function over the task store, declared with ``keel_tool`` together with
everything keel needs to know about it (``keel.tools.spec``). ``user_id`` and ``store`` are
injected by keel and hidden from the model's schema, so a model can never name another user.
``TODO_TOOLS`` is the one list; how a call runs is ``keel.tools.calls.run_tool_call``.
"""

from __future__ import annotations

from typing import Annotated, Any

from langchain_core.tools import BaseTool, InjectedToolArg
from pydantic import BeforeValidator, Field

from keel.tools.spec import Confirm, keel_tool
from keel.tools.store import MAX_TASK_ID, TaskStore

UserId = Annotated[str, InjectedToolArg]
Store = Annotated[TaskStore, InjectedToolArg]


def _not_a_bool(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("a task id is a number, not true or false")
    return value


TaskId = Annotated[int, BeforeValidator(_not_a_bool)]
"""A task id as tools take it: a whole number (``true`` is not 1)."""


@keel_tool(
    mutates=True,
    phrasings=[
        r"^(?:please )?(?:add|create|remind me to|new task:?)\s+(?:a )?(?:new )?(?:task:?\s+)?"
        r"(?:to )?(?P<title>.+?)(?: to (?:my |the )?(?:todo )?list)?$"
    ],
    reply="Created task: {title}",
    example='add a task ("Add buy milk")',
)
async def create_todo_task(title: str, user_id: UserId, store: Store) -> dict[str, Any]:
    """Create a new task with the given title."""
    return await store.create(user_id, title)


def _one_task(task: dict[str, Any]) -> str:
    return f"Task {task['id']}: {task['title']} ({'completed' if task['completed'] else 'open'})"


@keel_tool(
    phrasings=[
        r"^(?:show|get|view) (?:me )?task\s*#?(?P<ref>\d+)$",
        r"^details (?:for|of|on|about) {task}$",
    ],
    reply=_one_task,
    example='show one ("Show task 2")',
)
async def get_todo_task(task_id: TaskId, user_id: UserId, store: Store) -> dict[str, Any]:
    """Show the details of one task by its id."""
    return await store.get(user_id, task_id)


LIST_LIMIT_DEFAULT = 50
LIST_LIMIT_MAX = 100
"""How many tasks one ``list_todo_tasks`` call returns at most: a page, never the whole list."""
MORE_TASKS = "show more tasks"
"""What to say for the next page of a list."""


def _whole_number(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("a number, not true or false")
    return value


Offset = Annotated[
    int,
    Field(ge=0, le=MAX_TASK_ID, description="How many tasks to skip: a result's next_offset."),
    BeforeValidator(_whole_number),
]
PageSize = Annotated[
    int,
    Field(ge=1, le=LIST_LIMIT_MAX, description=f"How many tasks at most ({LIST_LIMIT_MAX})."),
    BeforeValidator(_whole_number),
]
TitleFilter = Annotated[
    str | None,
    Field(
        description="Only tasks whose title contains this text, in any case: the way to find a "
        "task named by its title."
    ),
]


def task_page(tasks: list[dict[str, Any]], total: int, offset: int, **also: Any) -> dict[str, Any]:
    """A page of tasks as the list tool returns it: where the page is first, then its tasks.

    ``next_offset`` is the offset of the next page, None on the last one. Paging comes before the
    tasks so that a result cut short (a preview, the model's history) still says where it was.
    """
    end = offset + len(tasks)
    return {
        **also,
        "total": total,
        "offset": offset,
        "next_offset": end if tasks and end < total else None,
        "tasks": tasks,
    }


def describe_page(page: dict[str, Any]) -> str:
    """A page of tasks as the offline model shows it, with where the page is in the list."""
    tasks = page.get("tasks") or []
    total = page.get("total", len(tasks))
    if not tasks:
        return f"No more tasks: you have {total:,} in all." if total else "Your list is empty."
    lines = [f"  {t['id']}. [{'x' if t['completed'] else ' '}] {t['title']}" for t in tasks]
    first = page.get("offset", 0) + 1
    shown = f"showing {first:,}-{first + len(tasks) - 1:,} of {total:,}"
    if page.get("next_offset") is not None:
        lines.append(f'({shown}; say "{MORE_TASKS}" for the next ones)')
    elif first > 1:
        lines.append(f"({shown}; that was the last of them)")
    return "Your tasks:\n" + "\n".join(lines)


LIST_DESCRIPTION = (
    "List the user's tasks by id, one page at a time. The result holds the page (tasks), how "
    "many tasks there are (total), the page's offset, and next_offset: pass it as offset for the "
    "next page (null on the last page)."
)


@keel_tool(
    description=LIST_DESCRIPTION,
    phrasings=[
        r"^(?P<more>(?:show|list|display|give|see)(?: me)? (?:some |the )?(?:more|next)"
        r"(?: (?:tasks|todos|ones|page|page of tasks))?(?: please)?"
        r"|(?:more|next) (?:tasks|todos|page)(?: please)?)$",
        r"^(?:what'?s|what is) (?:on )?(?:my|the) (?:todo )?list\??$"
        r"|^show (?:me )?(?:all|everything)(?: (?:my )?tasks)?$"
        r"|^(?:show|list|display) (?:me )?(?:all )?(?:of )?(?:my |the )?(?:tasks|todos|list)$"
        r"|^list$",
    ],
    reply=describe_page,
    prompt="A task named by title: call list_todo_tasks first (title_contains) to find its id.",
    example='list them ("What\'s on my list?")',
)
async def list_todo_tasks(
    user_id: UserId,
    store: Store,
    offset: Offset = 0,
    limit: PageSize = LIST_LIMIT_DEFAULT,
    title_contains: TitleFilter = None,
) -> dict[str, Any]:
    """A page of the user's tasks (of those whose title contains ``title_contains``, if given)."""
    if title_contains is not None and title_contains.strip():
        tasks, total = await store.find(user_id, title_contains, offset, limit)
        return task_page(tasks, total, offset, title_contains=title_contains)
    total = await store.count(user_id)
    return task_page(await store.list(user_id, offset, limit), total, offset)


@keel_tool(
    mutates=True,
    confirm=Confirm("rename", "renamed"),
    phrasings=[r"^(?:rename|retitle) {task} (?:to|as|into) {title}$"],
    reply="Renamed task {id} to: {title}",
    example='rename one ("Rename task 2 to call mom")',
)
async def update_todo_task(
    task_id: TaskId, title: str, user_id: UserId, store: Store
) -> dict[str, Any]:
    """Rename a task."""
    return await store.rename(user_id, task_id, title)


@keel_tool(
    mutates=True,
    phrasings=[
        r"^(?:finish(?:ed)?|complete|done with|mark|check off|tick off) {task}"
        r"(?: as (?:done|complete|completed|finished))?$"
    ],
    reply="Completed task: {title}",
    example='complete one ("Complete 2")',
)
async def complete_todo_task(task_id: TaskId, user_id: UserId, store: Store) -> dict[str, Any]:
    """Mark a task as completed."""
    return await store.complete(user_id, task_id)


@keel_tool(
    mutates=True,
    confirm=Confirm("delete", "deleted"),
    phrasings=[r"^(?:delete|remove|drop) {task}(?: from (?:my |the )?list)?$"],
    reply="Deleted task {id}: {title}",
    example='delete one ("Delete task 2")',
)
async def delete_todo_task(task_id: TaskId, user_id: UserId, store: Store) -> dict[str, Any]:
    """Delete a task."""
    return await store.delete(user_id, task_id)


TODO_TOOLS: list[BaseTool] = [
    create_todo_task,
    get_todo_task,
    list_todo_tasks,
    update_todo_task,
    complete_todo_task,
    delete_todo_task,
]
"""The one list of the todo tools: the agent binds it, MCP serves it, the offline model and the
plan read their phrasings, the system prompt their lines (each tool's ``ToolSpec``)."""
GET, LIST = get_todo_task.name, list_todo_tasks.name
"""The tools other code calls by name: a confirmation checks its task with GET; the offline
model finds a task named by title with LIST."""
