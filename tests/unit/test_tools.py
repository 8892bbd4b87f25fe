import json

import pytest

from keel.tools.calls import run_tool_call
from keel.tools.tasks.rows import TITLE_MAX_CHARS
from keel.tools.tasks.store import TaskError, TaskStore
from keel.tools.tasks.todo import TODO_TOOLS
from tests.helpers import invoke, open_database

EMPTY_PAGE = {"total": 0, "offset": 0, "next_offset": None, "tasks": []}
"""What listing gives a user with no task: an empty first page."""


@pytest.fixture
async def store(database_url):
    async with open_database(database_url) as db:
        yield TaskStore(db)


def test_injected_arguments_are_hidden_from_the_model():
    for tool in TODO_TOOLS:
        props = tool.tool_call_schema.model_json_schema().get("properties", {})
        assert "user_id" not in props and "store" not in props, tool.name


async def test_crud_round_trip(store):
    status, task = await invoke(store, "ann", "create_todo_task", title="buy milk")
    assert status == "success" and task["title"] == "buy milk" and task["completed"] is False
    assert (await invoke(store, "ann", "get_todo_task", task_id=task["id"]))[1][
        "title"
    ] == "buy milk"
    renamed = (
        await invoke(store, "ann", "update_todo_task", task_id=task["id"], title="oat milk")
    )[1]
    assert renamed["title"] == "oat milk"
    assert (await invoke(store, "ann", "complete_todo_task", task_id=task["id"]))[1]["completed"]
    assert (await invoke(store, "ann", "delete_todo_task", task_id=task["id"]))[0] == "success"
    assert (await invoke(store, "ann", "list_todo_tasks"))[1] == EMPTY_PAGE


async def test_no_user_sees_or_changes_another_users_task(store):
    _, task = await invoke(store, "ann", "create_todo_task", title="ann's secret")
    tid = task["id"]
    assert (await invoke(store, "bob", "list_todo_tasks"))[1] == EMPTY_PAGE
    for name, args in [
        ("get_todo_task", {}),
        ("update_todo_task", {"title": "mine now"}),
        ("complete_todo_task", {}),
        ("delete_todo_task", {}),
    ]:
        status, content = await invoke(store, "bob", name, task_id=tid, **args)
        assert status == "error" and content == f"Error: Task {tid} not found.", name
    status, still = await invoke(store, "ann", "get_todo_task", task_id=tid)
    assert still == {**task, "completed": False} and still["title"] == "ann's secret"


async def test_model_cannot_pass_a_user_id(store):
    await invoke(store, "ann", "create_todo_task", title="ann's")
    msg = await run_tool_call(
        {"name": "list_todo_tasks", "args": {"user_id": "ann"}, "id": "x", "type": "tool_call"},
        "bob",
        store,
        tools=TODO_TOOLS,
    )
    assert json.loads(msg.content) == EMPTY_PAGE


@pytest.mark.parametrize(
    "name,args,message",
    [
        ("get_todo_task", {"task_id": 999}, "Error: Task 999 not found."),
        ("create_todo_task", {"title": "   "}, "Error: A task title cannot be empty."),
        (
            "create_todo_task",
            {"title": "x" * (TITLE_MAX_CHARS + 1)},
            f"Error: A task title can be at most {TITLE_MAX_CHARS} characters (got 501).",
        ),
        ("update_todo_task", {"task_id": 999, "title": "x"}, "Error: Task 999 not found."),
        (
            "delete_todo_task",
            {"task_id": -1},
            "Error: Task id must be a positive whole number, not -1.",
        ),
        ("no_such_tool", {}, "Error: unknown tool 'no_such_tool'."),
    ],
)
async def test_bad_arguments_give_a_clear_error(store, name, args, message):
    assert await invoke(store, "ann", name, **args) == ("error", message)


async def test_title_of_exactly_the_limit_is_accepted(store):
    status, task = await invoke(store, "ann", "create_todo_task", title="x" * TITLE_MAX_CHARS)
    assert status == "success" and len(task["title"]) == TITLE_MAX_CHARS


async def test_wrong_argument_types_are_reported_not_raised(store):
    status, content = await invoke(store, "ann", "delete_todo_task", task_id="abc")
    assert status == "error" and content.startswith("Error: invalid arguments for delete_todo_task")


async def test_a_replayed_mutating_call_returns_its_recorded_result(store):
    call = {
        "name": "create_todo_task",
        "args": {"title": "once"},
        "id": "call_r1",
        "type": "tool_call",
    }
    first = await run_tool_call(call, "ann", store, tools=TODO_TOOLS)
    again = await run_tool_call(call, "ann", store, tools=TODO_TOOLS)
    assert again.content == first.content and again.status == first.status
    assert [t["title"] for t in await store.list("ann")] == ["once"]
    other_user = await run_tool_call(
        call, "bob", store, tools=TODO_TOOLS
    )  # call ids are per user: bob's runs
    assert json.loads(other_user.content)["title"] == "once"
    assert [t["title"] for t in await store.list("bob")] == ["once"]
    assert [t["title"] for t in await store.list("ann")] == ["once"]


async def test_each_users_tasks_are_numbered_from_one_and_never_reused(store):
    for title in ("a1", "a2", "a3"):
        await store.create("ann", title)
    bob_first = await store.create("bob", "b1")
    assert bob_first["id"] == 1  # nothing tells bob how many tasks ann has
    await store.delete("ann", 3)
    assert (await store.create("ann", "a4"))["id"] == 4  # a number is never given twice
    assert [t["id"] for t in await store.list("ann")] == [1, 2, 4]
    assert (await store.get("bob", 1))["title"] == "b1"
    assert (await store.get("ann", 1))["title"] == "a1"
    await store.delete("bob", 1)
    assert (await store.get("ann", 1))["title"] == "a1"  # bob's "task 1" was his own


async def test_a_failed_mutation_is_recorded_as_failed(store):
    call = {
        "name": "delete_todo_task",
        "args": {"task_id": 999},
        "id": "call_r2",
        "type": "tool_call",
    }
    first = await run_tool_call(call, "ann", store, tools=TODO_TOOLS)
    await store.create("ann", "late arrival")
    again = await run_tool_call(call, "ann", store, tools=TODO_TOOLS)
    assert first.status == again.status == "error" and again.content == first.content


@pytest.mark.parametrize("database_url", ["sqlite", "postgres"], indirect=True)
async def test_an_attribute_a_tool_adds_is_stored_read_and_kept_to_its_user(database_url):
    async with open_database(database_url) as db:
        await db.execute("ALTER TABLE keel_tasks ADD COLUMN due VARCHAR(100)")  # its migration
        store = TaskStore(db)
        task = await store.create("ann", "buy milk")
        assert task["due"] is None
        assert (await store.set_attributes("ann", task["id"], due="Friday"))["due"] == "Friday"
        assert (await store.get("ann", task["id"]))["due"] == "Friday"
        assert [t["due"] for t in await store.list("ann")] == ["Friday"]
        with pytest.raises(TaskError, match="not found"):
            await store.set_attributes("bob", task["id"], due="Monday")
        for wrong in ["title", "user_id", "updated_at", "Due", "due = 'x'; DROP TABLE x", ""]:
            with pytest.raises(TaskError) as refused:
                await store.set_attributes("ann", task["id"], **{wrong: "x"})
            assert refused.value.code == "invalid_attribute"
        with pytest.raises(TaskError):
            await store.set_attributes("ann", task["id"])
        assert await store.get("ann", task["id"]) == {**task, "due": "Friday"}
