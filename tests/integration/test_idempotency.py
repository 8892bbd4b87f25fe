"""A message sent with an Idempotency-Key runs at most once, against a real `keel serve`.

The retry case is the one that matters: a server killed (SIGKILL) at any point of a turn, a new
server, and the client sending the same message with the same key again. The task exists once,
the message is logged once, and the answer is the first attempt's.
"""

import json
import signal
import subprocess
import tempfile
import threading
import time
import uuid

import httpx
import pytest
import websockets

from tests.conftest import new_postgres_database
from tests.integration.server import free_port, keel_server, wait_until_ready
from tests.keel_process import KEEL, ROOT, keel_env

PAUSES = [
    "before:assistant",
    "before:tool_execution",
    "after_tool_commit",
    "before:response",
    "before_request_recorded",  # the turn ended and was checkpointed; its outcome not yet noted
]


@pytest.fixture(params=["sqlite", "postgres"])
def durable_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'keel.db'}"
    return new_postgres_database(request.getfixturevalue("postgres_server"))


def post(url, cid, content, key=None, **kw):
    headers = {"Idempotency-Key": key} if key else {}
    return httpx.post(
        f"{url}/v1/conversations/{cid}/messages",
        json={"content": content},
        headers=headers,
        timeout=60,
        **kw,
    )


def killed_mid_turn(database_url: str, pause: str, content: str, key: str) -> str:
    """A server that takes the keyed message and is SIGKILLed at ``pause``; the conversation."""
    port, output = free_port(), tempfile.TemporaryFile(mode="w+")
    server = subprocess.Popen(
        [*KEEL, "serve", "--port", str(port)],
        stdout=output,
        stderr=subprocess.STDOUT,
        text=True,
        env=keel_env(database_url, KEEL_PAUSE_AT=pause),
        cwd=ROOT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_ready(server, f"{url}/readyz", output, "keel serve")
        cid = httpx.post(f"{url}/v1/conversations", json={}).json()["conversation_id"]
        threading.Thread(
            target=lambda: _ignore(lambda: post(url, cid, content, key)), daemon=True
        ).start()
        deadline = time.monotonic() + 60
        while f"KEEL_PAUSED {pause}" not in _read(output):
            assert time.monotonic() < deadline, _read(output)[-3000:]
            time.sleep(0.05)
    finally:
        server.send_signal(signal.SIGKILL)
        server.wait(30)
        output.close()
    return cid


def _read(output) -> str:
    output.seek(0)
    return output.read()


def _ignore(call):
    try:
        call()
    except httpx.HTTPError:
        pass  # the server was killed under the request: the client sees a failure and retries


@pytest.mark.parametrize("pause", PAUSES)
def test_a_retry_after_the_server_died_mid_turn_runs_the_message_once(durable_url, pause):
    key = str(uuid.uuid4())
    cid = killed_mid_turn(durable_url, pause, "Add buy milk", key)
    with keel_server(durable_url) as server:
        retried = post(server.url, cid, "Add buy milk", key)
        assert retried.status_code == 200, retried.text
        assert retried.json()["reply"] == "Created task: buy milk"
        again = post(server.url, cid, "Add buy milk", key).json()
        assert again["replayed"] is True and again["reply"] == "Created task: buy milk"
        assert [t["title"] for t in httpx.get(f"{server.url}/v1/tasks").json()] == ["buy milk"]
        log = httpx.get(f"{server.url}/v1/conversations/{cid}/messages").json()
        said = [(m["role"], m["content"]) for m in log if m["content"] and m["role"] != "tool"]
        assert said == [("user", "Add buy milk"), ("assistant", "Created task: buy milk")]
        after = post(server.url, cid, "What's on my list?", str(uuid.uuid4())).json()
        assert after["reply"] == "Your tasks:\n- [ ] 1. buy milk" and not after["replayed"]


@pytest.mark.parametrize("pause", PAUSES)
def test_a_retry_after_another_message_finished_the_cut_off_turn_is_replayed(durable_url, pause):
    """Another message arrives first after the crash and finishes the cut-off turn; the retry
    with the key is answered from that turn, not run again, however often it comes."""
    key = str(uuid.uuid4())
    cid = killed_mid_turn(durable_url, pause, "Add buy milk", key)
    cut_off = pause != "before_request_recorded"  # its input was checkpointed before any step
    with keel_server(durable_url) as server:
        first = post(server.url, cid, "What's on my list?", str(uuid.uuid4()))
        assert first.status_code == 200, first.text
        recovered = "Created task: buy milk" if cut_off else None
        assert first.json()["recovered_reply"] == recovered
        for _ in range(2):  # however often it comes
            retried = post(server.url, cid, "Add buy milk", key)
            assert retried.status_code == 200, retried.text
            answer = retried.json()
            assert answer["reply"] == "Created task: buy milk"
            assert answer["replayed"] is True
        assert [t["title"] for t in httpx.get(f"{server.url}/v1/tasks").json()] == ["buy milk"]
        log = httpx.get(f"{server.url}/v1/conversations/{cid}/messages").json()
        users = [m["content"] for m in log if m["role"] == "user"]
        assert users.count("Add buy milk") == 1 and users.count("What's on my list?") == 1
        replies = [m["content"] for m in log if m["role"] == "assistant"]
        assert replies.count("Created task: buy milk") == 1


def test_a_key_answers_its_first_result_and_refuses_other_content(tmp_path):
    with keel_server(f"sqlite:///{tmp_path / 'keel.db'}") as server:
        cid = httpx.post(f"{server.url}/v1/conversations", json={}).json()["conversation_id"]
        key = str(uuid.uuid4())
        first = post(server.url, cid, "Add buy milk", key).json()
        assert first["replayed"] is False
        second = post(server.url, cid, "Add buy milk", key)
        assert second.json() == {**first, "replayed": True}
        other = post(server.url, cid, "Add oat milk", key)
        assert other.status_code == 422
        assert other.json()["error"]["code"] == "idempotency_key_reused"
        for bad in ("", "x" * 201, "tab\there", "é"):
            answer = httpx.post(
                f"{server.url}/v1/conversations/{cid}/messages",
                json={"content": "Add tea"},
                headers={"Idempotency-Key": bad.encode("utf-8")},
            )
            assert answer.status_code == 422, (bad, answer.text)
        assert [t["title"] for t in httpx.get(f"{server.url}/v1/tasks").json()] == ["buy milk"]


async def test_the_websocket_takes_an_idempotency_key(tmp_path):
    with keel_server(f"sqlite:///{tmp_path / 'keel.db'}") as server:
        cid = httpx.post(f"{server.url}/v1/conversations", json={}).json()["conversation_id"]
        ws_url = server.url.replace("http", "ws") + f"/v1/conversations/{cid}/ws"
        key = str(uuid.uuid4())
        async with websockets.connect(ws_url) as ws:
            await ws.recv()  # connected
            replies = []
            for _ in range(2):
                await ws.send(json.dumps({"content": "Add buy milk", "idempotency_key": key}))
                while (frame := json.loads(await ws.recv()))["type"] != "chat":
                    pass
                replies.append(frame["data"])
            await ws.send('{"content": "Add tea", "idempotency_key": "bad key"}')
            refused = json.loads(await ws.recv())
        assert [r["replayed"] for r in replies] == [False, True]
        assert replies[0]["reply"] == replies[1]["reply"] == "Created task: buy milk"
        assert refused["type"] == "error" and refused["data"]["code"] == "invalid_request"
        assert [t["title"] for t in httpx.get(f"{server.url}/v1/tasks").json()] == ["buy milk"]
