"""The operations a chat client needs beside talking, over HTTP against a real `keel serve`:
listing and deleting conversations, reading tasks, going back to an earlier topic, stopping a
turn, and whether a turn runs. Each one is the caller's own: another user's ids answer 404."""

import asyncio
import uuid

import httpx
import pytest

from tests.integration.conftest import ANN, BOB
from tests.integration.server import keel_server_with_model
from tests.integration.test_api import new_conversation, say


def get(server, path, headers=ANN):
    return httpx.get(f"{server.url}{path}", headers=headers, timeout=30)


def post(server, path, headers=ANN):
    return httpx.post(f"{server.url}{path}", headers=headers, timeout=30)


def test_the_conversation_list_is_the_callers_newest_first_with_a_preview(server_url):
    older = new_conversation(server_url)
    say(server_url, older, "Add water the ferns")
    newer = new_conversation(server_url)
    say(server_url, newer, "What's on my list?")
    listed = get(server_url, "/v1/conversations").json()
    ids = [c["conversation_id"] for c in listed]
    assert ids.index(newer) < ids.index(older)
    first = listed[ids.index(older)]
    assert first["title"] == "Add water the ferns"
    assert first["preview"] == "Created task: water the ferns"
    assert first["last_message_at"] >= first["created_at"]
    assert older not in [
        c["conversation_id"] for c in get(server_url, "/v1/conversations", BOB).json()
    ]
    assert get(server_url, "/v1/conversations", {}).status_code == 401


def test_tasks_are_read_per_user_and_another_users_number_is_no_such_task(server_url):
    title = f"file taxes {uuid.uuid4().hex[:6]}"
    cid = new_conversation(server_url)
    task = say(server_url, cid, f"Add {title}").json()["tool_calls"][0]["result"]
    assert task["title"] == title
    assert get(server_url, f"/v1/tasks/{task['id']}").json() == task
    assert title in [t["title"] for t in get(server_url, "/v1/tasks").json()]
    assert title not in [t["title"] for t in get(server_url, "/v1/tasks", BOB).json()]
    bobs = get(server_url, f"/v1/tasks/{task['id'] + 10_000}", BOB)
    assert bobs.status_code == 404 and bobs.json()["error"]["code"] == "task_not_found"
    assert get(server_url, "/v1/tasks/0").status_code == 422
    assert get(server_url, "/v1/tasks/99999999999999999999").status_code in (404, 422)


def test_going_back_to_an_earlier_topic_makes_it_active_for_the_next_turn(server_url):
    cid = new_conversation(server_url)
    say(server_url, cid, "Add buy bread")
    changed = say(server_url, cid, "Let's discuss the garden plans").json()
    assert [e["type"] for e in changed["events"]].count("topic_changed") == 1
    first, second = get(server_url, f"/v1/conversations/{cid}").json()["topics"]
    assert second["is_active"] and not first["is_active"]

    assert (
        post(server_url, f"/v1/conversations/{cid}/topics/{first['id']}/reopen", BOB).status_code
        == 404
    )
    reopened = post(server_url, f"/v1/conversations/{cid}/topics/{first['id']}/reopen")
    assert reopened.status_code == 200, reopened.text
    assert reopened.json()["topic"]["id"] == first["id"]
    assert reopened.json()["previous_topic_id"] == second["id"]
    state = get(server_url, f"/v1/conversations/{cid}").json()
    assert state["topic"]["id"] == first["id"]
    topics = {t["id"]: t for t in state["topics"]}
    assert topics[first["id"]]["is_active"] and topics[first["id"]]["ended_at"] is None
    assert topics[second["id"]]["summary"].startswith("Asked: Let's discuss the garden plans")

    say(server_url, cid, "What's on my list?")
    log = get(server_url, f"/v1/conversations/{cid}/messages?topic=active").json()
    assert [m["content"] for m in log if m["role"] == "user"] == [
        "Add buy bread",
        "What's on my list?",
    ]
    missing = post(server_url, f"/v1/conversations/{cid}/topics/{uuid.uuid4()}/reopen")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "topic_not_found"


def test_going_back_drops_a_question_waiting_for_yes_or_no_and_says_so(server_url):
    cid = new_conversation(server_url)
    say(server_url, cid, "Add dust the shelves")
    say(server_url, cid, "Let's discuss the trip")
    first = get(server_url, f"/v1/conversations/{cid}").json()["topics"][0]
    task = get(server_url, "/v1/tasks").json()[-1]
    assert say(server_url, cid, f"Delete task {task['id']}").json()["awaiting_confirmation"]
    reopened = post(server_url, f"/v1/conversations/{cid}/topics/{first['id']}/reopen").json()
    assert reopened["message"].endswith("was dropped; ask again to do it.")
    assert get(server_url, f"/v1/conversations/{cid}").json()["pending_confirmation"] is None
    assert say(server_url, cid, "yes").json()["awaiting_confirmation"] is None
    assert task in get(server_url, "/v1/tasks").json()


def test_the_chat_page_and_its_files_may_not_be_framed_or_load_from_elsewhere(server_url):
    for path in ("/", "/web/app.js", "/web/style.css", "/web/index.html"):
        answer = httpx.get(f"{server_url.url}{path}")
        assert answer.status_code == 200, path
        policy = answer.headers["content-security-policy"]
        assert "default-src 'self'" in policy and "frame-ancestors 'none'" in policy, path
        assert answer.headers["cache-control"] == "no-cache", path


def test_deleting_a_conversation_removes_it_and_keeps_the_tasks(server_url):
    title = f"call the plumber {uuid.uuid4().hex[:6]}"
    cid = new_conversation(server_url)
    say(server_url, cid, f"Add {title}")
    gone = httpx.delete(f"{server_url.url}/v1/conversations/{cid}", headers=BOB)
    assert gone.status_code == 404  # not bob's
    assert httpx.delete(f"{server_url.url}/v1/conversations/{cid}", headers=ANN).status_code == 204
    for path in ("", "/messages", "/checkpoints"):
        assert get(server_url, f"/v1/conversations/{cid}{path}").status_code == 404
    assert cid not in [c["conversation_id"] for c in get(server_url, "/v1/conversations").json()]
    assert title in [t["title"] for t in get(server_url, "/v1/tasks").json()]
    assert httpx.delete(f"{server_url.url}/v1/conversations/{cid}", headers=ANN).status_code == 404


def test_an_idle_conversation_has_no_turn_to_stop(server_url):
    cid = new_conversation(server_url)
    assert get(server_url, f"/v1/conversations/{cid}").json()["turn_running"] is False
    answer = post(server_url, f"/v1/conversations/{cid}/cancel")
    assert answer.json() == {"running": False, "cancel_requested": False}
    assert post(server_url, f"/v1/conversations/{cid}/cancel", BOB).status_code == 404


def call(name, **args):
    return {"name": name, "args": args}


@pytest.fixture
def model_server(tmp_path):
    with keel_server_with_model(f"sqlite:///{tmp_path / 'keel.db'}") as (server, stub):
        yield server, stub


async def test_stop_ends_a_running_turn_while_the_model_answers(model_server):
    server, stub = model_server
    stub.reply("Chores")  # the topic's title
    stub.reply(tool_calls=[call("create_todo_task", title="sweep the porch")])
    stub.reply(tool_calls=[call("create_todo_task", title="wash the car")])
    stub.delays[2] = 3.0  # the model is slow to ask for the second task
    cid = new_conversation(server, {})
    async with httpx.AsyncClient(base_url=server.url, timeout=60) as client:
        url = f"/v1/conversations/{cid}"
        turn = asyncio.create_task(client.post(f"{url}/messages", json={"content": "Two chores"}))
        async with asyncio.timeout(30):
            while len(stub.requests) < 3:  # the model is thinking about the second task
                await asyncio.sleep(0.05)
        assert (await client.get(url)).json()["turn_running"] is True
        stopped = await client.post(f"{url}/cancel")
        assert stopped.json() == {"running": True, "cancel_requested": True}
        result = (await turn).json()
        assert "Stopped at your request" in result["reply"]
        assert result["complete"] is False
        assert "turn_stopped" in [e["type"] for e in result["events"]]
        assert [t["title"] for t in (await client.get("/v1/tasks")).json()] == ["sweep the porch"]
        log = (await client.get(f"{url}/messages")).json()
        assert [m["role"] for m in log] == ["user", "tool", "assistant"]
        assert "sweep the porch" in log[1]["content"]
        assert log[-1]["content"].startswith("Stopped at your request")
        async with asyncio.timeout(10):  # the stub notices when it answers, after its delay
            while stub.closed == 0:  # the model's answer in flight was cancelled, its request
                await asyncio.sleep(0.1)  # closed
        assert (await client.get(url)).json()["turn_running"] is False
        stub.reply("Chores again")
        stub.reply("Nothing else to do.\nKEEL DONE: all set")
        after = (await client.post(f"{url}/messages", json={"content": "Thanks"})).json()
        assert after["reply"] == "Nothing else to do."


def test_the_next_turn_after_going_back_sees_that_topics_history(model_server):
    server, stub = model_server
    cid = new_conversation(server, {})
    stub.reply("Bread")
    stub.reply("Noted the sourdough.\nKEEL DONE: noted")
    say(server, cid, "I want to bake sourdough bread", {})
    stub.reply("Garden")
    stub.reply("Tomatoes it is.\nKEEL DONE: noted")
    say(server, cid, "New topic: planting tomatoes", {})
    first = get(server, f"/v1/conversations/{cid}", {}).json()["topics"][0]
    assert (
        post(server, f"/v1/conversations/{cid}/topics/{first['id']}/reopen", {}).status_code == 200
    )
    stub.reply("Proof it overnight.\nKEEL DONE: answered")
    assert say(server, cid, "How long should it rise?", {}).json()["reply"] == "Proof it overnight."
    seen = "\n".join(str(m.get("content")) for m in stub.requests[-1]["messages"])
    assert "sourdough" in seen and "tomatoes" not in seen
