"""A waiting question never holds a conversation hostage, over real HTTP, on SQLite and PostgreSQL.

The same user changes the task a question is about in another conversation: the question is put
again once, naming the change, and its answer is honoured; every other message is still taken.
The log shows the request and the question while it waits, and what drops it.
"""

import httpx
import pytest

from tests.integration.conftest import ANN

QUESTION = "Are you sure you want to delete task {n}? (yes/no)\nDelete task {n} - {title}"


@pytest.fixture
def http(server_url):
    with httpx.Client(base_url=server_url.url, timeout=60, headers=ANN) as client:
        yield client


def conversation(http: httpx.Client) -> str:
    return http.post("/v1/conversations", json={}).json()["conversation_id"]


def say(http: httpx.Client, cid: str, text: str) -> dict:
    answer = http.post(f"/v1/conversations/{cid}/messages", json={"content": text})
    assert answer.status_code == 200, answer.text
    return answer.json()


def logged(http: httpx.Client, cid: str) -> list[str]:
    return [m["content"] for m in http.get(f"/v1/conversations/{cid}/messages").json()]


def created(result: dict) -> int:
    return next(c["result"]["id"] for c in result["tool_calls"] if c["name"] == "create_todo_task")


def titles(http: httpx.Client, cid: str) -> str:
    return say(http, cid, "What's on my list?")["reply"]


@pytest.mark.parametrize("request_words", ["Delete task {n}", "delete the dentist one"])
def test_a_rename_elsewhere_is_put_again_and_the_yes_deletes(http, request_words):
    a, b = conversation(http), conversation(http)
    n = created(say(http, a, "Add book dentist"))
    asked = say(http, a, request_words.format(n=n))
    assert asked["awaiting_confirmation"]["task_ids"] == [n]
    assert say(http, b, f"Rename task {n} to call the dentist")["awaiting_confirmation"]
    assert say(http, b, "yes")["awaiting_confirmation"] is None
    again = say(http, a, "yes")
    assert again["reply"].startswith("This changed since I asked")
    assert again["reply"].endswith(QUESTION.format(n=n, title="call the dentist"))
    done = say(http, a, "yes")
    assert done["awaiting_confirmation"] is None
    assert f"Deleted task {n}" in done["reply"]
    assert "call the dentist" not in titles(http, a)


@pytest.mark.parametrize("answer", ["no", "cancel", "never mind", "What's on my list?"])
def test_after_a_rename_elsewhere_every_other_answer_is_taken(http, answer):
    a, b = conversation(http), conversation(http)
    n = created(say(http, a, "Add water plants"))
    say(http, a, f"Delete task {n}")
    say(http, b, f"Rename task {n} to water the ferns")
    say(http, b, "yes")
    result = say(http, a, answer)
    assert result["awaiting_confirmation"] is None
    added = say(http, a, "Add eggs")
    assert added["awaiting_confirmation"] is None and "eggs" in added["reply"]
    listed = titles(http, a)
    assert "water the ferns" in listed and "eggs" in listed


def test_the_log_shows_the_request_and_the_question_while_it_waits(http):
    cid = conversation(http)
    n = created(say(http, cid, "Add book dentist"))
    question = QUESTION.format(n=n, title="book dentist")
    assert say(http, cid, f"Delete task {n}")["reply"] == question
    assert logged(http, cid)[-2:] == [f"Delete task {n}", question]


@pytest.mark.parametrize("dropped_by", ["/reset", "POST reset", "reopen"])
def test_what_drops_the_question_is_logged_at_once(http, dropped_by):
    cid = conversation(http)
    say(http, cid, "Add buy milk")
    say(http, cid, "/reset")
    n = created(say(http, cid, "Add book dentist"))
    question = QUESTION.format(n=n, title="book dentist")
    say(http, cid, f"Delete task {n}")
    if dropped_by == "/reset":
        say(http, cid, "/reset")
    elif dropped_by == "POST reset":
        assert http.post(f"/v1/conversations/{cid}/reset").status_code == 200
    else:
        first = http.get(f"/v1/conversations/{cid}").json()["topics"][0]["id"]
        reopened = http.post(f"/v1/conversations/{cid}/topics/{first}/reopen")
        assert reopened.status_code == 200, reopened.text
    log = http.get(f"/v1/conversations/{cid}/messages").json()
    contents = [m["content"] for m in log]
    assert contents[-3:-1] == [f"Delete task {n}", question]
    assert log[-1]["role"] == "command"
    if dropped_by == "reopen":
        assert log[-1]["content"].startswith("Back to the topic")
        assert log[-1]["content"].endswith("was dropped; ask again to do it.")


def test_an_answer_with_nothing_waiting_is_told_so(http):
    cid = conversation(http)
    n = created(say(http, cid, "Add book dentist"))
    say(http, cid, f"Delete task {n}")
    assert f"Deleted task {n}" in say(http, cid, "yes")["reply"]
    late = say(http, cid, "yes")
    assert late["reply"].startswith("There is nothing waiting for a yes or no")
    assert late["tool_calls"] == []
