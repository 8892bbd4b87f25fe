"""The todo tools: the one list of what the agent may do with a user's tasks.

Each tool is an async function over the task store, declared with ``keel_tool`` together with
everything keel needs to know about it (``keel.tools.spec``): the ones that change tasks in
``keel.tools.tasks.changes``, the ones that read them in ``keel.tools.tasks.reads``. ``user_id``
and ``store`` are injected by keel and hidden from the model's schema, so a model can never name
another user. How a call runs is ``keel.tools.calls.run_tool_call``.
"""

from __future__ import annotations

from langchain_core.tools import BaseTool

from keel.tools.tasks.changes import (
    complete_todo_task,
    create_todo_task,
    delete_todo_task,
    repeat_todo_task,
    schedule_todo_task,
    update_todo_task,
)
from keel.tools.tasks.lists import clear_todo_list, move_todo_task
from keel.tools.tasks.reads import (
    find_todo_tasks,
    get_todo_task,
    list_todo_lists,
    list_todo_tasks,
)

TODO_TOOLS: list[BaseTool] = [
    create_todo_task,
    get_todo_task,
    list_todo_tasks,
    find_todo_tasks,
    list_todo_lists,
    update_todo_task,
    schedule_todo_task,
    repeat_todo_task,
    move_todo_task,
    complete_todo_task,
    clear_todo_list,
    delete_todo_task,
]
"""The one list of the todo tools: the agent binds it, MCP serves it, the offline model and the
plan read their phrasings, the system prompt their lines (each tool's ``ToolSpec``)."""
GET, LIST, FIND = get_todo_task.name, list_todo_tasks.name, find_todo_tasks.name
"""The tools other code calls by name: a confirmation checks its task with GET; the offline
model finds a task named by what it is with FIND, and a selection ("all the done ones") with
LIST."""
