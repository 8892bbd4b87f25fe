"""Two-step confirmation of destructive actions: yes, no, same message, restart, no double run."""

import uuid

import pytest

from keel.checkpoints.backend import open_backend
from keel.graphs.builder import build_graph
from keel.graphs.resources import open_resources
from keel.graphs.run_turn import run_turn
from keel.graphs.runner import snapshot
from keel.nodes.models.chat import build_agent_model
from keel.tools.tasks.store import TaskStore
from keel.tools.tasks.todo import TODO_TOOLS
from tests.stub_openai import StubOpenAI


async def say(keel, cid, text):
    return await run_turn(keel.graph, cid, text, keel.context())


@pytest.mark.parametrize("answer", ["yes", "y", "YES", "confirm", "Yes, delete it"])
async def test_yes_executes(memory_keel, answer):
    task = await memory_keel.store.create("local", "buy milk")
    cid = str(uuid.uuid4())
    asked = await say(memory_keel, cid, f"Delete task {task['id']}")
    assert asked.reply == (
        f"Are you sure you want to delete task {task['id']}? (yes/no)\n"
        f"Delete task {task['id']} - buy milk"
    )
    assert asked.agent_state == "tool_execution"
    done = await say(memory_keel, cid, answer)
    assert done.reply == f"Deleted task {task['id']}: buy milk"
    assert done.awaiting_confirmation is None and done.complete
    assert await memory_keel.store.list("local") == []


@pytest.mark.parametrize("answer", ["no", "n", "nope", "no wait", "actually keep it", "add eggs"])
async def test_a_no_or_a_new_request_cancels_and_leaves_the_task(memory_keel, answer):
    task = await memory_keel.store.create("local", "buy milk")
    cid = str(uuid.uuid4())
    await say(memory_keel, cid, f"Rename task {task['id']} to oat milk")
    result = await say(memory_keel, cid, answer)
    assert f"Cancelled: task {task['id']} was not renamed." in result.reply.splitlines()
    assert result.awaiting_confirmation is None
    assert await memory_keel.store.get("local", task["id"]) == task
    titles = [t["title"] for t in await memory_keel.store.list("local")]
    if answer == "add eggs":  # a new request instead of an answer: carried out after the no
        assert result.reply.splitlines()[0] == "Created task: eggs"
        assert titles == ["buy milk", "eggs"]
    else:
        assert result.reply == f"Cancelled: task {task['id']} was not renamed."
        assert titles == ["buy milk"]


@pytest.mark.parametrize("unclear", ["maybe later", "what?", "hmm", "I'm not sure"])
async def test_an_unclear_answer_is_asked_again(memory_keel, unclear):
    task = await memory_keel.store.create("local", "buy milk")
    cid = str(uuid.uuid4())
    await say(memory_keel, cid, f"Delete task {task['id']}")
    again = await say(memory_keel, cid, unclear)
    question = (
        f"Are you sure you want to delete task {task['id']}? (yes/no)\n"
        f"Delete task {task['id']} - buy milk"
    )
    assert again.reply == f"Please answer yes or no. {question}"
    assert again.awaiting_confirmation["task_ids"] == [task["id"]]
    assert await memory_keel.store.get("local", task["id"]) == task
    done = await say(memory_keel, cid, "go ahead")
    assert done.reply == f"Deleted task {task['id']}: buy milk"


async def test_one_question_for_several_deletes(memory_keel):
    for title in ("buy milk", "call mom", "book dentist", "pay rent"):
        await memory_keel.store.create("local", title)
    cid = str(uuid.uuid4())
    asked = await say(memory_keel, cid, "delete the milk and the dentist ones")
    assert asked.reply == (
        "Are you sure you want to delete 2 tasks (1, 3)? (yes/no)\n"
        "Delete task 1 - buy milk\nDelete task 3 - book dentist"
    )
    assert asked.awaiting_confirmation["task_ids"] == [1, 3]
    done = await say(memory_keel, cid, "yes please")
    assert done.reply == "Deleted task 1: buy milk\nDeleted task 3: book dentist"
    assert [t["title"] for t in await memory_keel.store.list("local")] == ["call mom", "pay rent"]


async def test_a_no_to_several_cancels_them_all(memory_keel):
    for title in ("a", "b", "c"):
        await memory_keel.store.create("local", title)
    cid = str(uuid.uuid4())
    asked = await say(memory_keel, cid, "remove all my tasks")
    assert asked.reply == (
        "Are you sure you want to delete 3 tasks (1, 2, 3)? (yes/no)\n"
        "Delete task 1 - a\nDelete task 2 - b\nDelete task 3 - c"
    )
    await say(memory_keel, cid, "nah")
    assert len(await memory_keel.store.list("local")) == 3


async def test_confirmed_in_the_same_message_runs_at_once(memory_keel):
    task = await memory_keel.store.create("local", "buy milk")
    result = await say(memory_keel, str(uuid.uuid4()), f"delete task {task['id']}, yes I'm sure")
    assert result.awaiting_confirmation is None
    assert result.reply == f"Deleted task {task['id']}: buy milk"


async def test_a_missing_task_is_reported_without_asking(memory_keel):
    result = await say(memory_keel, str(uuid.uuid4()), "Delete task 77")
    assert result.awaiting_confirmation is None
    assert result.reply == "Error: Task 77 not found."


async def test_the_tool_runs_once_after_the_yes(memory_keel, monkeypatch):
    task = await memory_keel.store.create("local", "buy milk")
    other = await memory_keel.store.create("local", "walk dog")
    calls = []
    original = TaskStore.create

    async def counting_create(self, user_id, title, **fields):
        calls.append(title)
        return await original(self, user_id, title, **fields)

    monkeypatch.setattr(TaskStore, "create", counting_create)
    cid = str(uuid.uuid4())
    await say(memory_keel, cid, f"add bread and then delete task {task['id']}")
    result = await say(memory_keel, cid, "yes")
    assert calls == ["bread"]
    titles = [t["title"] for t in await memory_keel.store.list("local")]
    assert titles == [other["title"], "bread"]
    assert [t["name"] for t in result.tool_calls] == ["create_todo_task", "delete_todo_task"]


async def test_the_pause_survives_a_restart(tmp_path):
    url = f"sqlite:///{tmp_path / 'keel.db'}"
    cid = str(uuid.uuid4())
    async with open_backend(url) as backend:
        db, saver = backend.db, backend.saver
        store = TaskStore(db)
        task = await store.create("local", "buy milk")
        asked = await run_turn(
            build_graph(saver),
            cid,
            f"Delete task {task['id']}",
            open_resources(db, tools=TODO_TOOLS).context(),
        )
        assert asked.awaiting_confirmation is not None
    async with open_backend(url) as backend:
        graph, store, db = build_graph(backend.saver), TaskStore(backend.db), backend.db
        state = await snapshot(graph, cid)
        assert state["pending_confirmation"]["prompt"] == asked.reply
        done = await run_turn(graph, cid, "yes", open_resources(db, tools=TODO_TOOLS).context())
        assert done.reply == f"Deleted task {task['id']}: buy milk"
        assert await store.list("local") == []


async def test_a_rename_to_the_title_it_has_changes_nothing_and_asks_nothing(memory_keel):
    task = await memory_keel.store.create("local", "buy milk")
    result = await say(memory_keel, str(uuid.uuid4()), f"rename task {task['id']} to  buy milk ")
    assert result.awaiting_confirmation is None
    assert result.reply == f"Task {task['id']} is already called “buy milk”: nothing to change."


async def test_a_model_renaming_a_task_to_its_own_title_is_told_so_not_asked(memory_keel):
    """A small model read "I bought the milk" as a rename of "buy milk" to itself."""
    task = await memory_keel.store.create("local", "buy milk")
    with StubOpenAI() as stub:
        rename = {"task_id": task["id"], "title": "buy milk"}
        stub.reply(tool_calls=[{"name": "update_todo_task", "args": rename}])
        stub.reply(tool_calls=[{"name": "complete_todo_task", "args": {"task_id": task["id"]}}])
        stub.reply("Marked buy milk done.\nKEEL DONE: completed it")
        model = build_agent_model(TODO_TOOLS, api_key="test", model="stub", base_url=stub.base_url)
        context = memory_keel.context(model=model)
        result = await run_turn(memory_keel.graph, str(uuid.uuid4()), "I bought the milk", context)
        told = [m for m in stub.requests[1]["messages"] if m["role"] == "tool"]
    assert result.awaiting_confirmation is None and result.complete
    assert told[-1]["content"] == "Task 1 is already called “buy milk”: nothing to change."
    assert result.reply == "Marked buy milk done."
    assert (await memory_keel.store.get("local", task["id"]))["completed"]
