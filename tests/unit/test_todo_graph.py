"""Each decision-table row through the compiled graph, on memory, SQLite and PostgreSQL."""

import uuid

import pytest


def new_id() -> str:
    return str(uuid.uuid4())


async def test_create(keel):
    result = await keel.say(new_id(), "Add buy milk")
    assert result.reply == "Created task: buy milk"
    assert result.complete and result.agent_state == "response"
    assert [t["name"] for t in result.tool_calls] == ["create_todo_task"]
    assert [t["title"] for t in await keel.store.list("local")] == ["buy milk"]


async def test_remind_me_to(keel):
    result = await keel.say(new_id(), "Remind me to call mom")
    assert result.reply == "Created task: call mom"


async def test_get_by_id(keel):
    task = await keel.store.create("local", "buy milk")
    for text in (f"Show task {task['id']}", f"Details for {task['id']}"):
        result = await keel.say(new_id(), text)
        assert result.reply == f"Task {task['id']}: buy milk (open)"


async def test_list(keel):
    await keel.store.create("local", "buy milk")
    await keel.store.create("local", "walk dog")
    for text in ("What's on my list?", "Show all"):
        result = await keel.say(new_id(), text)
        assert "buy milk" in result.reply and "walk dog" in result.reply
        assert result.reply.startswith("Your tasks:")


async def test_complete_by_id_and_by_title(keel):
    a = await keel.store.create("local", "buy milk")
    b = await keel.store.create("local", "walk dog")
    assert (await keel.say(new_id(), f"Finish {a['id']}")).reply == "Completed task: buy milk"
    result = await keel.say(new_id(), "complete walk dog")
    assert result.reply == "Completed task: walk dog"
    assert [t["name"] for t in result.tool_calls] == ["find_todo_tasks", "complete_todo_task"]
    assert all(t["completed"] for t in await keel.store.list("local"))
    assert (await keel.store.get("local", b["id"]))["completed"]


async def test_done_with(keel):
    task = await keel.store.create("local", "buy milk")
    assert (await keel.say(new_id(), f"Done with {task['id']}")).reply == "Completed task: buy milk"


async def test_rename_asks_then_renames(keel):
    task = await keel.store.create("local", "buy milk")
    cid = new_id()
    asked = await keel.say(cid, f"Rename task {task['id']} to buy oat milk")
    assert asked.reply == (
        f"Are you sure you want to rename task {task['id']}? (yes/no)\n"
        f"Rename task {task['id']}: buy milk -> buy oat milk"
    )
    assert (await keel.store.get("local", task["id"]))["title"] == "buy milk"
    done = await keel.say(cid, "yes")
    assert done.reply == f"Renamed task {task['id']} to: buy oat milk"
    assert (await keel.store.get("local", task["id"]))["title"] == "buy oat milk"


async def test_delete_asks_then_deletes(keel):
    task = await keel.store.create("local", "buy milk")
    cid = new_id()
    asked = await keel.say(cid, f"Remove task {task['id']}")
    assert asked.awaiting_confirmation is not None
    assert asked.awaiting_confirmation["action"] == "delete"
    assert asked.awaiting_confirmation["task_id"] == task["id"]
    assert not asked.complete
    done = await keel.say(cid, "y")
    assert done.reply == f"Deleted task {task['id']}: buy milk"
    assert await keel.store.list("local") == []


async def test_a_word_on_why_after_a_delete_is_not_looked_for(keel):
    await keel.store.create("local", "buy milk")
    cid = new_id()
    asked = await keel.say(cid, "Delete buy milk, it was a typo")
    assert asked.awaiting_confirmation is not None
    done = await keel.say(cid, "yes")
    assert done.reply == "Deleted task 1: buy milk"  # nothing on "it was a typo"
    assert await keel.store.list("local") == []


async def test_a_question_outside_todos_gets_one_honest_line(keel):
    result = await keel.say(new_id(), "what's the weather like?")
    assert result.reply.startswith("Offline I can only help with your todo list")
    assert result.complete and result.tool_calls == []


async def test_tool_error_is_reported_as_the_tool_said(keel):
    result = await keel.say(new_id(), "Show task 4242")
    assert result.reply == "Error: Task 4242 not found."
    assert result.complete


async def test_unknown_title_is_said_and_nothing_is_claimed(keel):
    result = await keel.say(new_id(), "complete the moon landing")
    assert result.reply == 'I couldn\'t find a task matching "moon landing".'
    assert [t["name"] for t in result.tool_calls] == ["find_todo_tasks"]


async def test_one_users_conversation_cannot_touch_another_users_tasks(keel):
    task = await keel.store.create("ann", "ann's task")
    result = await keel.say(new_id(), f"Delete task {task['id']}, yes I'm sure", user_id="bob")
    assert result.reply == f"Error: Task {task['id']} not found."
    assert await keel.store.list("ann") == [{**task}]
    listing = await keel.say(new_id(), "Show all", user_id="bob")
    assert listing.reply == "Your list is empty."


@pytest.mark.parametrize("text", ["Add milk and delete task 99", "add eggs; add milk"])
async def test_several_requests_make_one_plan_item_each(keel, text):
    result = await keel.say(new_id(), text)
    assert result.todolist is not None
    assert len(result.todolist["items"]) == 2
    assert all(i["status"] in ("done", "skipped") for i in result.todolist["items"])
