"""What people wrote for other assistants, said to a real `keel serve` over HTTP (SQLite and
PostgreSQL): the learned understanding answers them the same in every client of the turn."""

import httpx

from tests.integration.conftest import ANN, BOB
from tests.integration.test_api import new_conversation, say


def titles(server, headers=ANN):
    return [t["title"] for t in httpx.get(f"{server.url}/v1/tasks", headers=headers).json()]


def test_requests_people_make_of_any_assistant(server_url):
    cid = new_conversation(server_url, BOB)
    made = say(server_url, cid, "put eggs on my shopping list", BOB).json()
    assert made["reply"] == "Created task: eggs (shopping list)"
    made = say(server_url, cid, "i need a reminder to wash dishes", BOB).json()
    assert made["reply"] == "Created task: wash dishes"
    listed = say(server_url, cid, "tell me what's on my todo list", BOB).json()
    assert "eggs" not in listed["reply"] and "wash dishes" in listed["reply"]
    shopping = say(server_url, cid, "and what's on the shopping list?", BOB).json()
    assert shopping["reply"] == "Your tasks on the shopping list:\n- [ ] 1. eggs"
    asked = say(server_url, cid, "remove eggs from my shopping list", BOB).json()
    assert asked["awaiting_confirmation"]["action"] == "delete"
    say(server_url, cid, "yes", BOB)
    assert titles(server_url, BOB) == ["wash dishes"]


def test_another_assistants_job_changes_nothing(server_url):
    cid = new_conversation(server_url)
    before = titles(server_url)
    for text in ("set an alarm for 7 am", "book me a train to leeds", "should i call mom?"):
        answer = say(server_url, cid, text).json()
        assert answer["tool_calls"] == [], (text, answer["tool_calls"])
    assert titles(server_url) == before
