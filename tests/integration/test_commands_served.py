"""Reset and going back to a topic over HTTP and the WebSocket, against a real `keel serve`.

Each way in (the reset operation, ``/reset`` typed as a message, the WebSocket's reset action,
the reopen operation) runs the command as a turn of the graph: a new topic, the mission cleared,
a waiting confirmation dropped so that a later "yes" deletes nothing; on SQLite and PostgreSQL.
"""

import json

import httpx
import websockets
from httpx_sse import aconnect_sse

from keel.nodes.reset_conversation import RESET_MESSAGE
from tests.integration.conftest import ANN
from tests.integration.test_api import new_conversation, say

ANSWER_KEYS = {"success", "message", "new_topic_id", "previous_messages_preserved"}


def url(server, cid, tail=""):
    return f"{server.url}/v1/conversations/{cid}{tail}"


def state(server, cid):
    return httpx.get(url(server, cid), headers=ANN, timeout=30).json()


def task_titles(server):
    return [t["title"] for t in httpx.get(f"{server.url}/v1/tasks", headers=ANN).json()]


def waiting_delete(server, title):
    cid = new_conversation(server)
    task = say(server, cid, f"Add {title}").json()["tool_calls"][0]["result"]
    asked = say(server, cid, f"Delete task {task['id']}").json()
    assert asked["awaiting_confirmation"]["task_id"] == task["id"]
    return cid


def the_reset_events(events):
    changed, reset = [e for e in events if e["type"] in ("topic_changed", "state_updated")]
    assert changed["type"] == "topic_changed" and changed["data"]["reason"] == "user_reset"
    assert reset["data"]["mission_reset"] and reset["data"]["reason"] == "user_requested"
    return changed["data"]["new_topic_id"]


def test_the_reset_operation_drops_a_waiting_delete(server_url):
    cid = waiting_delete(server_url, "water the ferns")
    answer = httpx.post(url(server_url, cid, "/reset"), headers=ANN, timeout=30)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert set(body) == ANSWER_KEYS and body["message"] == RESET_MESSAGE
    assert body["success"] is True and body["previous_messages_preserved"] is True
    after = state(server_url, cid)
    assert after["pending_confirmation"] is None and after["mission"] is None
    assert after["topic"]["id"] == body["new_topic_id"] and after["agent_state"] == "response"
    assert say(server_url, cid, "yes").json()["tool_calls"] == []
    assert "water the ferns" in task_titles(server_url)


async def test_reset_typed_as_a_message_streams_the_same_events(server_url):
    cid = waiting_delete(server_url, "oil the hinges")
    frames = []
    async with httpx.AsyncClient(timeout=60) as client:
        async with aconnect_sse(
            client,
            "POST",
            url(server_url, cid, "/messages"),
            json={"content": "/reset"},
            headers=dict(ANN),
        ) as source:
            async for sse in source.aiter_sse():
                frames.append((sse.event, json.loads(sse.data)))
    result = frames[-1][1]
    assert frames[-1][0] == "result" and result["reply"] == RESET_MESSAGE
    assert result["awaiting_confirmation"] is None and result["mission"] is None
    streamed = [data for kind, data in frames if kind == "event"]
    assert the_reset_events(streamed) == the_reset_events(result["events"])
    assert result["topic"]["id"] == the_reset_events(result["events"])
    assert say(server_url, cid, "yes").json()["tool_calls"] == []
    assert "oil the hinges" in task_titles(server_url)


async def test_the_websocket_reset_action_and_reset_typed_there(server_url):
    cid = waiting_delete(server_url, "fix the gate")
    ws_url = url(server_url, cid, "/ws").replace("http", "ws", 1)
    async with websockets.connect(ws_url, additional_headers=ANN) as ws:
        assert json.loads(await ws.recv())["data"]["status"] == "connected"
        await ws.send(json.dumps({"action": "reset"}))
        frame = json.loads(await ws.recv())
        assert frame["type"] == "reset" and set(frame["data"]) == ANSWER_KEYS
        assert frame["data"]["message"] == RESET_MESSAGE
        assert state(server_url, cid)["topic"]["id"] == frame["data"]["new_topic_id"]

        await ws.send(json.dumps({"content": "yes"}))
        while (frame := json.loads(await ws.recv()))["type"] != "chat":
            pass
        assert frame["data"]["tool_calls"] == [] and frame["data"]["awaiting_confirmation"] is None

        await ws.send(json.dumps({"content": "/reset"}))
        events = []
        while (frame := json.loads(await ws.recv()))["type"] != "chat":
            if frame["type"] == "event":
                events.append(frame["data"])
        assert frame["data"]["reply"] == RESET_MESSAGE
        assert the_reset_events(events) == frame["data"]["topic"]["id"]
    assert "fix the gate" in task_titles(server_url)


def test_reopen_answers_as_before_and_the_next_turn_is_in_that_topic(server_url):
    cid = new_conversation(server_url)
    say(server_url, cid, "Add sweep the porch")
    say(server_url, cid, "Let's discuss the holiday")
    first, second = state(server_url, cid)["topics"]
    answer = httpx.post(url(server_url, cid, f"/topics/{first['id']}/reopen"), headers=ANN)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert set(body) == {"topic", "previous_topic_id", "message"}
    assert body["topic"]["id"] == first["id"] and body["topic"]["is_active"] is True
    assert body["topic"]["ended_at"] is None and body["previous_topic_id"] == second["id"]
    assert body["message"] == f"Back to the topic: {first['title']}"
    again = httpx.post(url(server_url, cid, f"/topics/{first['id']}/reopen"), headers=ANN).json()
    assert again["previous_topic_id"] is None and again["message"].startswith("Already on")
    nxt = say(server_url, cid, "What's on my list?").json()
    assert nxt["topic"]["id"] == first["id"]
    assert not [e for e in nxt["events"] if e["type"] == "topic_changed"]
