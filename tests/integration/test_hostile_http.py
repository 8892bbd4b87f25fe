"""Hostile and odd input over HTTP and WebSocket, against a real `keel serve`."""

import json

import httpx
import pytest
import websockets

from tests.integration.conftest import ANN, KEYS
from tests.integration.server import keel_server
from tests.integration.server import say as server_say
from tests.keel_process import run_keel


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    db = f"sqlite:///{tmp_path_factory.mktemp('hostile') / 'k.db'}"
    with keel_server(db, KEEL_API_KEYS=KEYS, KEEL_MAX_MESSAGE_CHARS="2000") as running:
        yield running


def new_conversation(server, headers=ANN) -> str:
    answer = httpx.post(f"{server.url}/v1/conversations", json={}, headers=headers)
    return answer.json()["conversation_id"]


def post_raw(server, cid, body: bytes):
    return httpx.post(
        f"{server.url}/v1/conversations/{cid}/messages",
        content=body,
        headers={**ANN, "content-type": "application/json"},
        timeout=60,
    )


def test_a_lone_surrogate_is_refused_before_anything_runs(server):
    cid = new_conversation(server)
    answer = post_raw(server, cid, b'{"content": "Add \\ud800 surr-probe"}')
    assert answer.status_code == 422, answer.text
    assert answer.json()["error"]["code"] == "invalid_request"
    assert "surrogate" in answer.json()["error"]["message"]
    after = post_raw(server, cid, b'{"content": "Show all"}').json()
    assert after["recovered_reply"] is None
    assert "surr-probe" not in after["reply"]
    log = httpx.get(f"{server.url}/v1/conversations/{cid}/messages", headers=ANN).json()
    assert [m["content"] for m in log if m["role"] == "user"] == ["Show all"]


@pytest.mark.parametrize(
    "body",
    [
        b'{"content": "Add \xff\xfe milk"}',  # not UTF-8
        b'{"content": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",  # nested too deep
        b'{"content": ' + b"9" * 5000 + b"}",  # a number too long to read
    ],
    ids=["invalid-utf8", "deep-nesting", "huge-number"],
)
def test_an_unreadable_body_is_a_422_like_any_bad_input(server, body):
    cid = new_conversation(server)
    answer = post_raw(server, cid, body)
    assert answer.status_code == 422, answer.text
    assert answer.json()["error"]["code"] == "invalid_request"


def test_a_huge_task_id_answers_and_the_conversation_goes_on(server):
    cid = new_conversation(server)
    for message in ("Show task 99999999999999999999", f"Delete task {2**63}", f"Complete {2**64}"):
        answer = post_raw(server, cid, json.dumps({"content": message}).encode())
        assert answer.status_code == 200, answer.text
        assert answer.json()["awaiting_confirmation"] is None
    shown = post_raw(server, cid, b'{"content": "Show task 99999999999999999999"}').json()
    assert "Task 99999999999999999999 not found." in shown["reply"]
    assert post_raw(server, cid, b'{"content": "Add ok"}').json()["reply"] == "Created task: ok"


async def test_websocket_binary_frames_and_failures_get_an_error_frame(server):
    cid = new_conversation(server)
    ws_url = server.url.replace("http", "ws") + f"/v1/conversations/{cid}/ws"
    async with websockets.connect(ws_url, additional_headers=ANN) as ws:
        await ws.recv()  # connected
        await ws.send(b"\x00\x01binary")
        error = json.loads(await ws.recv())
        assert error == {
            "type": "error",
            "data": {"code": "invalid_frame", "message": "send text frames holding JSON objects"},
        }
        await ws.send('{"content": "Add \\ud800 x"}')
        refused = json.loads(await ws.recv())
        assert refused["type"] == "error" and refused["data"]["code"] == "invalid_request"
        await ws.send(json.dumps({"content": "Add still open"}))
        frames = []
        while not frames or frames[-1]["type"] != "chat":
            frames.append(json.loads(await ws.recv()))
        assert frames[-1]["data"]["reply"] == "Created task: still open"


def test_a_key_given_twice_is_refused_at_start(tmp_path):
    for keys, says in [
        ("alice:same,bob:same", "the same key"),
        ("alice:one,alice:two", "names user 'alice' twice"),
    ]:
        result = run_keel(f"sqlite:///{tmp_path / 'k.db'}", ["serve"], KEEL_API_KEYS=keys)
        assert result.returncode == 2, result.stdout + result.stderr
        assert says in result.stdout + result.stderr


def say(server, cid, content, headers=ANN):
    # a short timeout: the backtracking parser once took over a minute on inputs like these
    return server_say(server, cid, content, headers, timeout=10)


def test_a_whitespace_bomb_is_answered_at_once_and_the_server_stays_up(server):
    cid = new_conversation(server)
    for bomb in ("a" + " " * 1998 + "b", "add" + " " * 1990 + "\nx\ny", "delete task" + " " * 1980):
        answer = say(server, cid, bomb)  # the server's limit here is 2000 characters
        assert answer.status_code == 200, answer.text
        assert httpx.get(f"{server.url}/healthz", timeout=2).status_code == 200


def test_punctuation_is_no_yes_and_every_yes_word_answers_the_question(server):
    cid = new_conversation(server)
    ids = [
        say(server, cid, f"Add chore {n}").json()["tool_calls"][0]["result"]["id"] for n in range(2)
    ]
    asked = say(server, cid, f"Delete task {ids[0]}, ...").json()
    assert asked["awaiting_confirmation"]["task_id"] == ids[0]  # asked, not deleted at once
    assert say(server, cid, "yep").json()["reply"] == f"Deleted task {ids[0]}: chore 0"
    done = say(server, cid, f"delete task {ids[1]}, sure").json()
    assert done["reply"] == f"Deleted task {ids[1]}: chore 1"


def test_each_user_counts_tasks_from_one(server):
    bob = {"Authorization": "Bearer bob-key"}
    ann_cid, bob_cid = new_conversation(server), new_conversation(server, bob)
    for n in range(3):
        say(server, ann_cid, f"Add ann chore {n}")
    first = say(server, bob_cid, "Add bob chore", bob).json()
    assert first["tool_calls"][0]["result"]["id"] == 1  # bob's first, whatever ann has
    say(server, bob_cid, "Delete task 1, yes", bob)
    mine = say(server, ann_cid, "Show all").json()["reply"]
    assert "ann chore 0" in mine  # bob's task 1 was his own


def test_a_nul_character_is_refused_like_any_bad_text(server):
    cid = new_conversation(server)
    answer = post_raw(server, cid, b'{"content": "Add buy\\u0000milk"}')
    assert answer.status_code == 422 and "NUL" in answer.json()["error"]["message"]
