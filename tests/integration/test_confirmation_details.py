"""A confirmation names what a yes will change, over real HTTP, for every client.

``awaiting_confirmation.changes`` names each task with its title (and a rename's new title);
the question stays the reply; a multi-task delete lists every task.
"""

import httpx
import pytest

from tests.integration.conftest import ANN


@pytest.fixture
def say(server_url):
    with httpx.Client(base_url=server_url.url, timeout=60) as http:
        cid = http.post("/v1/conversations", json={}, headers=ANN).json()["conversation_id"]

        def send(text: str) -> dict:
            answer = http.post(
                f"/v1/conversations/{cid}/messages", json={"content": text}, headers=ANN
            )
            assert answer.status_code == 200, answer.text
            return answer.json()

        yield send


def task_number(result: dict) -> int:
    return next(c["result"]["id"] for c in result["tool_calls"] if c["name"] == "create_todo_task")


def test_a_delete_names_the_task_and_its_title(say) -> None:
    number = task_number(say("Add book dentist"))
    result = say(f"Delete task {number}")
    waiting = result["awaiting_confirmation"]
    assert result["reply"] == (
        f"Are you sure you want to delete task {number}? (yes/no)\n"
        f"Delete task {number} - book dentist"
    )
    assert waiting["changes"] == [
        {
            "action": "delete",
            "task_id": number,
            "title": "book dentist",
            "new_title": None,
            "text": f"Delete task {number} - book dentist",
        }
    ]
    assert say("no")["awaiting_confirmation"] is None


def test_a_rename_names_the_old_and_the_new_title(say) -> None:
    number = task_number(say("Add buy milk"))
    waiting = say(f"Rename task {number} to buy oat milk")["awaiting_confirmation"]
    change = waiting["changes"][0]
    assert (change["title"], change["new_title"]) == ("buy milk", "buy oat milk")
    assert change["text"] == f"Rename task {number}: buy milk -> buy oat milk"
    say("no")


def test_a_delete_of_several_tasks_lists_every_one(say) -> None:
    first = task_number(say("Add water plants"))
    second = task_number(say("Add feed cat"))
    waiting = say(f"Delete tasks {first} and {second}")["awaiting_confirmation"]
    assert [c["text"] for c in waiting["changes"]] == [
        f"Delete task {first} - water plants",
        f"Delete task {second} - feed cat",
    ]
    say("no")
