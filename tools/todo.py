"""The six todo tools the agent may call, and the one way to run a tool call.

Each tool is a LangChain tool whose ``user_id`` and ``store`` arguments are injected by keel and
hidden from the model's schema, so a model can never name another user. ``run_tool_call`` turns one
model tool call into a ``ToolMessage``: JSON of what the store returned, or ``Error: ...`` with the
store's own message. Nothing is reported that the store did not return, and no mutating call runs
twice (see ``keel.tools.ledger``).
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from langchain_core.messages import ToolCall, ToolMessage
from langchain_core.tools import BaseTool, InjectedToolArg, tool
from pydantic import BaseModel, BeforeValidator, Field, ValidationError

from keel.tools.crash_points import pause_point
from keel.tools.ledger import recall, record
from keel.tools.store import MAX_TASK_ID, TaskError, TaskStore

UserId = Annotated[str, InjectedToolArg]
Store = Annotated[TaskStore, InjectedToolArg]


def _not_a_bool(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("a task id is a number, not true or false")
    return value


TaskId = Annotated[int, BeforeValidator(_not_a_bool)]
"""A task id as tools take it: a whole number (``true`` is not 1)."""


def storable(value: Any) -> Any:
    """Tool-call arguments with every integer past 64 bits written as its digits.

    A tool call may name any number ("Show task 99999999999999999999"), but the checkpoint
    serialiser refuses such an integer, which would fail every later turn of the conversation.
    The tool still reads the digits, and answers that there is no such task.
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value if -(2**63) <= value < 2**64 else str(value)
    if isinstance(value, dict):
        return {k: storable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [storable(v) for v in value]
    return value


@tool
async def create_todo_task(title: str, user_id: UserId, store: Store) -> dict[str, Any]:
    """Create a new task with the given title."""
    return await store.create(user_id, title)


@tool
async def get_todo_task(task_id: TaskId, user_id: UserId, store: Store) -> dict[str, Any]:
    """Show the details of one task by its id."""
    return await store.get(user_id, task_id)


LIST_LIMIT_DEFAULT = 50
LIST_LIMIT_MAX = 100
"""How many tasks one ``list_todo_tasks`` call returns at most: a page, never the whole list."""


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


LIST_DESCRIPTION = (
    "List the user's tasks by id, one page at a time. The result holds the page (tasks), how "
    "many tasks there are (total), the page's offset, and next_offset: pass it as offset for the "
    "next page (null on the last page)."
)


@tool(description=LIST_DESCRIPTION)
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


@tool
async def update_todo_task(
    task_id: TaskId, title: str, user_id: UserId, store: Store
) -> dict[str, Any]:
    """Rename a task."""
    return await store.rename(user_id, task_id, title)


@tool
async def complete_todo_task(task_id: TaskId, user_id: UserId, store: Store) -> dict[str, Any]:
    """Mark a task as completed."""
    return await store.complete(user_id, task_id)


@tool
async def delete_todo_task(task_id: TaskId, user_id: UserId, store: Store) -> dict[str, Any]:
    """Delete a task."""
    return await store.delete(user_id, task_id)


MUTATES = "mutates"
"""Tool metadata: the tool changes tasks, so each call id runs once (``keel.tools.ledger``)."""
CONFIRM = "confirm"
"""Tool metadata: the agent asks the user for a yes first; the value is the question's verb."""

create_todo_task.metadata = {MUTATES: True}
update_todo_task.metadata = {MUTATES: True, CONFIRM: "rename"}
complete_todo_task.metadata = {MUTATES: True}
delete_todo_task.metadata = {MUTATES: True, CONFIRM: "delete"}

TODO_TOOLS: list[BaseTool] = [
    create_todo_task,
    get_todo_task,
    list_todo_tasks,
    update_todo_task,
    complete_todo_task,
    delete_todo_task,
]
"""The one list of the todo tools: the agent binds it and the MCP endpoint serves it."""
TOOLS_BY_NAME = {t.name: t for t in TODO_TOOLS}
CREATE, GET, LIST, RENAME, COMPLETE, DELETE = (t.name for t in TODO_TOOLS)
"""The tools' names, for the code that speaks of a tool by name."""

MUTATIONS = frozenset(t.name for t in TODO_TOOLS if (t.metadata or {}).get(MUTATES))
"""Tools that change tasks: each call id runs at most once."""

DESTRUCTIVE: dict[str, str] = {
    t.name: t.metadata[CONFIRM] for t in TODO_TOOLS if t.metadata and CONFIRM in t.metadata
}
"""Tools that need a yes from the user first, with the verb of their confirmation question."""


def _validation_message(name: str, exc: ValidationError) -> str:
    problems = "; ".join(
        f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}"
        for e in exc.errors()
        if e["loc"] and e["loc"][0] not in ("user_id", "store")
    )
    return f"Error: invalid arguments for {name}: {problems or 'missing arguments'}."


async def _call_tool(tool_: BaseTool, args: dict[str, Any]) -> Any:
    """The tool's function on ``args`` checked against its schema (``ValidationError`` if not).

    What ``tool.ainvoke`` does, without the callback run it opens and the signature it inspects
    on every call: keel's tool calls are traced as graph steps already.
    """
    schema = tool_.args_schema
    coroutine = getattr(tool_, "coroutine", None)
    if coroutine is None or not isinstance(schema, type) or not issubclass(schema, BaseModel):
        return await tool_.ainvoke(args)
    parsed = schema.model_validate(args)
    return await coroutine(**{k: getattr(parsed, k) for k in args if k in schema.model_fields})


async def _invoke(tool_: BaseTool, call: ToolCall, user_id: str, store: TaskStore) -> ToolMessage:
    name, call_id = call["name"], call.get("id") or ""
    args = {k: v for k, v in (call.get("args") or {}).items() if k not in ("user_id", "store")}
    try:
        result = await _call_tool(tool_, {**args, "user_id": user_id, "store": store})
    except TaskError as exc:
        return ToolMessage(f"Error: {exc.message}", tool_call_id=call_id, name=name, status="error")
    except ValidationError as exc:
        content = _validation_message(name, exc)
        return ToolMessage(content, tool_call_id=call_id, name=name, status="error")
    return ToolMessage(json.dumps(result), tool_call_id=call_id, name=name)


async def run_tool_call(
    call: ToolCall,
    user_id: str,
    store: TaskStore,
    pause_at: str | None = None,
    key: str | None = None,
) -> ToolMessage:
    """Run one tool call for ``user_id`` and return its ToolMessage (status error on failure).

    A mutating call with a ``key`` (else its id) runs at most once: its result is recorded under
    the key in the transaction that changes the task, and a call with a recorded key returns that
    result again. ``pause_at`` is for crash tests (``keel.tools.crash_points``).
    """
    name, call_id = call["name"], call.get("id") or ""
    key = key or call_id
    tool_ = TOOLS_BY_NAME.get(name)
    if tool_ is None:
        content = f"Error: unknown tool {name!r}."
        return ToolMessage(content, tool_call_id=call_id, name=name, status="error")
    if name not in MUTATIONS or not key:
        return await _invoke(tool_, call, user_id, store)
    async with store.db.transaction() as tx:
        if recorded := await recall(tx, user_id, key):
            return ToolMessage(
                recorded.content, tool_call_id=call_id, name=name, status=recorded.status
            )
        message = await _invoke(tool_, call, user_id, store.within(tx))
        await record(store.db, tx, user_id, key, name, message.status, str(message.content))
    pause_point("after_tool_commit", pause_at)
    return message
