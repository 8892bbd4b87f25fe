"""The HTTP API of docs/api.md against a real `keel serve` process, on SQLite and PostgreSQL."""

import asyncio
import json
import uuid

import httpx
import pytest
import websockets
from httpx_sse import aconnect_sse

from tests.integration.conftest import ANN, BOB
from tests.integration.server import say as server_say


def new_conversation(server, headers=ANN) -> str:
    answer = httpx.post(f"{server.url}/v1/conversations", json={}, headers=headers)
    assert answer.status_code == 201, answer.text
    body = answer.json()
    uuid.UUID(body["conversation_id"])
    assert body["created_at"]
    return body["conversation_id"]


def say(server, cid, content, headers=ANN):
    return server_say(server, cid, content, headers)


def test_the_readme_session(server_url):
    cid = new_conversation(server_url)
    added = say(server_url, cid, "Add buy milk").json()
    assert added["reply"] == "Created task: buy milk" and added["complete"] is True
    assert added["tool_calls"][0]["name"] == "create_todo_task"
    task_id = added["tool_calls"][0]["result"]["id"]
    listed = say(server_url, cid, "What's on my list?").json()
    assert "buy milk" in listed["reply"]
    asked = say(server_url, cid, f"Delete task {task_id}").json()
    assert asked["awaiting_confirmation"] == {
        "action": "delete",
        "task_id": task_id,
        "task_ids": [task_id],
        "prompt": (
            f"Are you sure you want to delete task {task_id}? (yes/no)\n"
            f"Delete task {task_id} - buy milk"
        ),
        "changes": [
            {
                "action": "delete",
                "task_id": task_id,
                "title": "buy milk",
                "new_title": None,
                "text": f"Delete task {task_id} - buy milk",
            }
        ],
    }
    assert asked["reply"] == asked["awaiting_confirmation"]["prompt"]
    done = say(server_url, cid, "yes").json()
    assert done["reply"] == f"Deleted task {task_id}: buy milk"
    assert done["awaiting_confirmation"] is None
    assert set(done) >= {
        "conversation_id",
        "reply",
        "agent_state",
        "complete",
        "mission",
        "todolist",
        "topic",
        "events",
        "tool_calls",
    }


def test_snapshot_log_checkpoints_and_reset(server_url):
    cid = new_conversation(server_url)
    say(server_url, cid, "Add buy milk")
    state = httpx.get(f"{server_url.url}/v1/conversations/{cid}", headers=ANN).json()
    assert state["agent_state"] == "response" and state["complete"] is True
    assert state["mission"] == "Add buy milk" and state["stats"]["turns"] == 1
    assert len(state["topics"]) == 1 and state["topics"][0]["is_active"]
    assert state["pending_confirmation"] is None

    log = httpx.get(f"{server_url.url}/v1/conversations/{cid}/messages", headers=ANN).json()
    assert [m["role"] for m in log] == ["user", "tool", "assistant"]  # one reply a turn
    assert log[0]["content"] == "Add buy milk" and log[-1]["content"] == "Created task: buy milk"

    points = httpx.get(f"{server_url.url}/v1/conversations/{cid}/checkpoints", headers=ANN).json()
    # a turn is one graph run; of its checkpoints, the turn's end is the one it can go on from
    assert len(points) == 1 and points[0]["next"] == []

    reset = httpx.post(f"{server_url.url}/v1/conversations/{cid}/reset", headers=ANN).json()
    assert set(reset) == {"success", "message", "new_topic_id", "previous_messages_preserved"}
    assert reset["success"] is True and reset["previous_messages_preserved"] is True
    active = httpx.get(
        f"{server_url.url}/v1/conversations/{cid}/messages?topic=active", headers=ANN
    ).json()
    assert [(m["role"], m["content"]) for m in active] == [("command", reset["message"])]
    everything = httpx.get(
        f"{server_url.url}/v1/conversations/{cid}/messages?topic=all", headers=ANN
    ).json()
    assert [m["role"] for m in everything] == ["user", "tool", "assistant", "command"]
    after = httpx.get(f"{server_url.url}/v1/conversations/{cid}", headers=ANN).json()
    assert after["mission"] is None and after["topic"]["id"] == reset["new_topic_id"]


@pytest.mark.parametrize(
    "method,path,body,status,code",
    [
        ("post", "/v1/conversations/{cid}/messages", {"content": ""}, 422, "invalid_request"),
        ("post", "/v1/conversations/{cid}/messages", {"content": "   "}, 422, "invalid_request"),
        ("post", "/v1/conversations/{cid}/messages", {}, 422, "invalid_request"),
        ("post", "/v1/conversations/{cid}/messages", {"content": 5}, 422, "invalid_request"),
        (
            "post",
            "/v1/conversations/{cid}/messages",
            {"content": "x", "y": 1},
            422,
            "invalid_request",
        ),
        (
            "post",
            "/v1/conversations/{cid}/messages",
            {"content": "x" * 2001},
            413,
            "message_too_large",
        ),
        ("get", "/v1/conversations/not-a-uuid", None, 422, "invalid_request"),
        ("get", "/v1/conversations/{random}", None, 404, "conversation_not_found"),
        (
            "post",
            "/v1/conversations/{random}/messages",
            {"content": "hi"},
            404,
            "conversation_not_found",
        ),
        ("get", "/v1/conversations/{cid}/messages?topic=some", None, 422, "invalid_request"),
    ],
)
def test_errors_are_json_with_the_right_status(server_url, method, path, body, status, code):
    cid = new_conversation(server_url)
    url = server_url.url + path.format(cid=cid, random=uuid.uuid4())
    answer = httpx.request(method, url, json=body, headers=ANN)
    assert answer.status_code == status, answer.text
    assert answer.json()["error"]["code"] == code
    assert answer.json()["error"]["message"]
    state = httpx.get(f"{server_url.url}/v1/conversations/{cid}", headers=ANN).json()
    assert state["stats"] == {}  # nothing was run, nothing was lost


def test_malformed_json_is_a_422(server_url):
    cid = new_conversation(server_url)
    answer = httpx.post(
        f"{server_url.url}/v1/conversations/{cid}/messages",
        content=b"{nope",
        headers={**ANN, "content-type": "application/json"},
    )
    assert answer.status_code == 422 and answer.json()["error"]["code"] == "invalid_request"


ENDPOINTS = [
    ("get", "/v1/conversations/{cid}", None),
    ("get", "/v1/conversations/{cid}/messages", None),
    ("get", "/v1/conversations/{cid}/checkpoints", None),
    ("post", "/v1/conversations/{cid}/messages", {"content": "Show all"}),
    ("post", "/v1/conversations/{cid}/reset", None),
]


@pytest.mark.parametrize("method,path,body", ENDPOINTS)
def test_auth_matrix(server_url, method, path, body):
    cid = new_conversation(server_url, ANN)
    url = server_url.url + path.format(cid=cid)
    assert httpx.request(method, url, json=body).status_code == 401
    bad = httpx.request(method, url, json=body, headers={"Authorization": "Bearer nope"})
    assert bad.status_code == 401 and bad.json()["error"]["code"] == "unauthorized"
    foreign = httpx.request(method, url, json=body, headers=BOB, timeout=60)
    unknown = httpx.request(
        method, server_url.url + path.format(cid=uuid.uuid4()), json=body, headers=BOB, timeout=60
    )
    assert foreign.status_code == unknown.status_code == 404
    assert foreign.json()["error"]["code"] == unknown.json()["error"]["code"]
    assert httpx.request(method, url, json=body, headers=ANN, timeout=60).status_code in (200, 201)


def test_the_schema_declares_the_bearer_key_on_every_operation_but_the_health_checks(server_url):
    schema = httpx.get(f"{server_url.url}/openapi.json").json()
    schemes = schema["components"]["securitySchemes"]
    assert [(s["type"], s["scheme"].lower()) for s in schemes.values()] == [("http", "bearer")]
    needs_key = [{name: []} for name in schemes]
    assert "security" not in schema  # no global requirement: the health checks stay open
    operations = {
        (method, path): op for path, ops in schema["paths"].items() for method, op in ops.items()
    }
    assert operations["post", "/v1/conversations"]["security"] == needs_key
    assert "security" not in operations["get", "/healthz"]
    assert "security" not in operations["get", "/readyz"]
    for where, op in operations.items():
        keyed = where[1].startswith("/v1/") or where[1] == "/metrics"
        assert op.get("security") == (needs_key if keyed else None), where
    assert httpx.get(f"{server_url.url}/healthz").status_code == 200  # and indeed with no key


def test_no_user_reaches_another_users_tasks(server_url):
    ann = new_conversation(server_url, ANN)
    created = say(server_url, ann, "Add ann's secret", ANN).json()
    task_id = created["tool_calls"][0]["result"]["id"]
    bob = new_conversation(server_url, BOB)
    assert "ann's secret" not in say(server_url, bob, "Show all", BOB).json()["reply"]
    attempt = say(server_url, bob, f"Delete task {task_id}, yes I'm sure", BOB).json()
    assert attempt["reply"] == f"Error: Task {task_id} not found."
    assert say(server_url, bob, f"Show task {task_id}", BOB).json()["reply"].startswith("Error:")
    still = say(server_url, ann, f"Show task {task_id}", ANN).json()
    assert still["reply"] == f"Task {task_id}: ann's secret (open)"


async def test_sse_streams_events_then_the_result(server_url):
    cid = new_conversation(server_url)
    seen = []
    async with httpx.AsyncClient(timeout=60) as client:
        async with aconnect_sse(
            client,
            "POST",
            f"{server_url.url}/v1/conversations/{cid}/messages",
            json={"content": "Add buy milk"},
            headers=dict(ANN),  # aconnect_sse adds Accept to the dict it is given
        ) as source:
            assert source.response.headers["content-type"].startswith("text/event-stream")
            async for sse in source.aiter_sse():
                seen.append((sse.event, json.loads(sse.data)))
    kinds = [k for k, _ in seen]
    assert kinds[-1] == "result" and "event" in kinds
    assert any(d["type"] == "tool_call" for k, d in seen if k == "event")
    tokens = "".join(d["data"]["text"] for k, d in seen if k == "token")
    assert "Created task: buy milk" in tokens and "DONE" not in tokens
    assert seen[-1][1]["reply"] == "Created task: buy milk"


async def test_websocket_protocol(server_url):
    cid = new_conversation(server_url)
    ws_url = server_url.url.replace("http", "ws") + f"/v1/conversations/{cid}/ws"
    async with websockets.connect(ws_url, additional_headers=ANN) as ws:
        hello = json.loads(await ws.recv())
        assert hello == {"type": "status", "data": {"status": "connected", "conversation_id": cid}}
        await ws.send(json.dumps({"content": "Add buy milk"}))
        frames = []
        while True:
            frame = json.loads(await ws.recv())
            frames.append(frame)
            if frame["type"] == "chat":
                break
        types = [f["type"] for f in frames]
        assert types[0] == "status" and "event" in types
        assert frames[-1]["data"]["reply"] == "Created task: buy milk"
        await ws.send("not json")
        assert json.loads(await ws.recv())["type"] == "error"
        await ws.send(json.dumps({"content": "  "}))
        assert json.loads(await ws.recv())["data"]["code"] == "EMPTY_MESSAGE"
        await ws.send(json.dumps({"action": "reset"}))
        reset = json.loads(await ws.recv())
        assert reset["type"] == "reset" and reset["data"]["success"] is True


async def test_websocket_refuses_other_users(server_url):
    cid = new_conversation(server_url)
    ws_url = server_url.url.replace("http", "ws") + f"/v1/conversations/{cid}/ws?token=bob-key"
    async with websockets.connect(ws_url) as ws:
        frame = json.loads(await ws.recv())
        assert frame["type"] == "error"
        with pytest.raises(websockets.ConnectionClosed):
            await ws.recv()


async def test_concurrent_posts_run_one_turn_at_a_time(server_url):
    cid = new_conversation(server_url)
    async with httpx.AsyncClient(timeout=60) as client:
        answers = await asyncio.gather(
            *[
                client.post(
                    f"{server_url.url}/v1/conversations/{cid}/messages",
                    json={"content": f"Add chore {n}"},
                    headers=ANN,
                )
                for n in range(6)
            ]
        )
    codes = [a.status_code for a in answers]
    assert set(codes) <= {200, 409} and 200 in codes
    for busy in (a for a in answers if a.status_code == 409):
        assert busy.json()["error"]["code"] == "conversation_busy"
    ok = codes.count(200)
    state = httpx.get(f"{server_url.url}/v1/conversations/{cid}", headers=ANN).json()
    assert state["stats"]["turns"] == ok
    log = httpx.get(f"{server_url.url}/v1/conversations/{cid}/messages", headers=ANN).json()
    assert [m["role"] for m in log] == ["user", "tool", "assistant"] * ok


def test_health(server_url):
    assert httpx.get(f"{server_url.url}/healthz").json() == {"status": "ok"}
    assert httpx.get(f"{server_url.url}/readyz").json() == {"status": "ready"}
    schema = httpx.get(f"{server_url.url}/openapi.json").json()
    props = schema["components"]["schemas"]["TurnResult"]["properties"]
    assert props["reply"]["description"] and props["reply"]["examples"]


def test_every_schema_field_has_a_description_and_an_example(server_url):
    schemas = httpx.get(f"{server_url.url}/openapi.json").json()["components"]["schemas"]
    missing = [
        f"{name}.{field}"
        for name, schema in schemas.items()
        if name not in ("HTTPValidationError", "ValidationError")
        for field, prop in schema.get("properties", {}).items()
        if not prop.get("description") or "examples" not in prop
    ]
    assert missing == [], missing


def test_a_legacy_session_starts_the_conversation_in_its_mapped_state(server_url):
    url = f"{server_url.url}/v1/conversations"
    legacy = {"legacy_session": {"completed": False, "processing": True, "owner": "old-system"}}
    created = httpx.post(url, json=legacy, headers=ANN)
    assert created.status_code == 201, created.text
    cid = created.json()["conversation_id"]
    state = httpx.get(f"{url}/{cid}", headers=ANN).json()
    assert state["agent_state"] == "assistant" and state["complete"] is False
    assert say(server_url, cid, "Add buy milk").json()["complete"] is True
    after = httpx.get(f"{url}/{cid}", headers=ANN).json()
    assert after["agent_state"] == "response" and after["stats"]["turns"] == 1
    for bad in ({"completed": [1]}, {"processing": "x" * 101}):
        refused = httpx.post(url, json={"legacy_session": bad}, headers=ANN)
        assert refused.status_code == 422, refused.text
        assert refused.json()["error"]["code"] == "invalid_request"


def test_everyday_words_over_http(server_url):
    cid = new_conversation(server_url)
    added = say(server_url, cid, "don't let me forget to water the plants 🙏").json()
    assert added["reply"] == "Created task: water the plants" and added["complete"]
    made = say(server_url, cid, "add zebra crossing walk, zebra feeding").json()
    walk, feed = (c["result"]["id"] for c in made["tool_calls"])
    asked = say(server_url, cid, "scratch the zebra ones").json()
    assert asked["reply"].startswith(
        f'Several tasks match "zebra": {walk}. zebra crossing walk, {feed}. zebra feeding.'
    )
    assert asked["complete"] and asked["awaiting_confirmation"] is None
    picked = say(server_url, cid, "the second one").json()
    assert picked["awaiting_confirmation"]["task_ids"] == [feed]
    again = say(server_url, cid, "hmm?").json()
    assert again["awaiting_confirmation"]["prompt"].startswith("Please answer yes or no.")
    done = say(server_url, cid, "yes please").json()
    assert done["reply"] == f"Deleted task {feed}: zebra feeding"


async def test_dates_are_read_in_the_time_zone_a_message_brings(server_url):
    cid = new_conversation(server_url)
    post = f"{server_url.url}/v1/conversations/{cid}/messages"
    tasks = f"{server_url.url}/v1/tasks"
    text = "remind me to call the dentist tomorrow at 9am"
    before = httpx.get(tasks, headers=ANN).headers["X-Total-Count"]
    bad = httpx.post(post, json={"content": text, "timezone": "Mars/Olympus"}, headers=ANN)
    assert bad.status_code == 422 and "not a time zone" in bad.text
    assert httpx.get(tasks, headers=ANN).headers["X-Total-Count"] == before  # nothing done
    made = httpx.post(post, json={"content": text, "timezone": "Asia/Tokyo"}, headers=ANN).json()
    assert made["reply"].startswith("Created task: call the dentist (due ")
    task = made["tool_calls"][0]["result"]
    assert task["due"].endswith("T09:00+09:00")
    in_tokyo = httpx.get(tasks, params={"timezone": "Asia/Tokyo"}, headers=ANN).json()
    assert [(t["title"], t["due"], t["overdue"]) for t in in_tokyo if t["id"] == task["id"]] == [
        ("call the dentist", task["due"], False)
    ]
    one = f"{tasks}/{task['id']}"
    in_london = httpx.get(one, params={"timezone": "Europe/London"}, headers=ANN).json()
    assert in_london["due"].endswith("T00:00+00:00")  # the same moment where the reader is
    refused = httpx.get(tasks, params={"timezone": "nowhere"}, headers=ANN)
    assert refused.status_code == 422 and refused.json()["error"]["code"] == "invalid_request"
    ws_url = server_url.url.replace("http", "ws") + f"/v1/conversations/{cid}/ws"
    async with websockets.connect(ws_url, additional_headers=ANN) as ws:
        await ws.recv()  # connected
        await ws.send(json.dumps({"content": "what's due tomorrow", "timezone": "Asia/Tokyo"}))
        while (frame := json.loads(await ws.recv()))["type"] != "chat":
            pass
        assert f"{task['id']}. call the dentist (due " in frame["data"]["reply"]
        await ws.send(json.dumps({"content": "hi", "timezone": "Mars/Olympus"}))
        error = json.loads(await ws.recv())
        assert error["type"] == "error" and "not a time zone" in error["data"]["message"]


def test_a_named_list_is_read_over_http_and_only_by_its_user(server_url):
    cid = new_conversation(server_url)
    post = f"{server_url.url}/v1/conversations/{cid}/messages"
    made = httpx.post(post, json={"content": "add batteries to the hardware list"}, headers=ANN)
    assert made.json()["reply"] == "Created task: batteries (hardware list)"
    lists = httpx.get(f"{server_url.url}/v1/lists", headers=ANN).json()
    assert {"list": "hardware", "tasks": 1, "open": 1} in lists and lists[0]["list"] == "todo"
    on_it = httpx.get(f"{server_url.url}/v1/tasks", params={"list": "Hardware"}, headers=ANN)
    assert [t["title"] for t in on_it.json()] == ["batteries"]
    assert on_it.headers["X-Total-Count"] == "1" and on_it.json()[0]["list"] == "hardware"
    theirs = httpx.get(f"{server_url.url}/v1/lists", headers=BOB).json()
    assert all(found["list"] != "hardware" for found in theirs)
    bad = httpx.get(f"{server_url.url}/v1/tasks", params={"list": "?!"}, headers=ANN)
    assert bad.status_code == 422 and "not a list name" in bad.text
