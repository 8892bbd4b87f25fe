"""What a tool did, in the short sentence every client shows, and what a yes will change."""

from keel.tools.confirm import Confirm
from keel.tools.spec import tool_sentence
from keel.tools.tasks.todo import TODO_TOOLS


def test_each_task_tool_says_what_it_did_in_a_sentence():
    task = {"id": 4, "title": "buy milk", "completed": False}
    assert tool_sentence(TODO_TOOLS, "create_todo_task", task) == "Created task 4: buy milk"
    assert tool_sentence(TODO_TOOLS, "delete_todo_task", task) == "Deleted task 4: buy milk"
    assert tool_sentence(TODO_TOOLS, "update_todo_task", task) == "Renamed task 4: buy milk"
    page = {"tasks": [task], "total": 1}
    assert tool_sentence(TODO_TOOLS, "list_todo_tasks", page) == "Listed 1 task"


def test_a_refused_call_says_nothing_and_an_error_says_itself():
    cancelled = "Cancelled: task 1 was not deleted."
    assert tool_sentence(TODO_TOOLS, "delete_todo_task", cancelled) is None
    error = "Error: task 9 not found"
    assert tool_sentence(TODO_TOOLS, "delete_todo_task", error) == error
    assert tool_sentence(TODO_TOOLS, "no_such_tool", {"x": 1}) == "Ran no such tool"


def test_a_confirmation_names_the_task_and_a_renames_new_title():
    rename = Confirm("rename", "renamed", to="title")
    change = rename.change({"task_id": 1, "title": "buy oat milk"}, {"title": "buy milk"})
    assert change["text"] == "Rename task 1: buy milk -> buy oat milk"
    delete = Confirm("delete", "deleted")
    dentist = {"title": "book dentist"}
    assert delete.change({"task_id": 3}, dentist)["text"] == "Delete task 3 - book dentist"
    done = {"title": "book dentist", "completed": True}
    assert delete.change({"task_id": 3}, done)["text"] == "Delete task 3 - book dentist (done)"
    assert delete.change({"task_id": 3}, None)["text"] == "Delete task 3"
