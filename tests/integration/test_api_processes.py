"""The API across processes: the turn lock, two servers on one database, outages, settings."""

import asyncio
import json
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import psycopg
import pytest

from keel.checkpoints.backend import open_backend
from keel.checkpoints.locks import TurnLocks
from tests.conftest import new_postgres_database
from tests.integration.conftest import ANN, KEYS
from tests.integration.server import keel_server
from tests.integration.server import say as server_say
from tests.keel_process import run_keel


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'keel.db'}"
    return new_postgres_database(request.getfixturevalue("postgres_server"))


def create(url, headers=ANN):
    return httpx.post(f"{url}/v1/conversations", json={}, headers=headers).json()["conversation_id"]


def say(url, cid, content):
    return server_say(url, cid, content, ANN)


async def test_a_turn_held_elsewhere_gives_409_or_waits(db_url):
    with (
        keel_server(db_url, KEEL_API_KEYS=KEYS) as reject,
        keel_server(db_url, KEEL_API_KEYS=KEYS, KEEL_DOUBLE_TEXT="enqueue") as enqueue,
    ):
        cid = create(reject.url)
        async with open_backend(db_url) as backend:
            lock = TurnLocks(backend.process_locks)
            async with lock.hold(cid):
                busy = say(reject.url, cid, "Add milk")
                assert busy.status_code == 409
                assert busy.json()["error"]["code"] == "conversation_busy"
                waiting = asyncio.create_task(asyncio.to_thread(say, enqueue.url, cid, "Add eggs"))
                await asyncio.sleep(1.0)
                assert not waiting.done()
            answer = await waiting
        assert answer.status_code == 200 and answer.json()["reply"] == "Created task: eggs"
        state = httpx.get(f"{reject.url}/v1/conversations/{cid}", headers=ANN).json()
        assert state["stats"]["turns"] == 1


def test_two_servers_serve_one_conversation_alternately(postgres_server):
    db = new_postgres_database(postgres_server)
    with keel_server(db, KEEL_API_KEYS=KEYS) as one, keel_server(db, KEEL_API_KEYS=KEYS) as two:
        cid = create(one.url)
        for n in range(6):
            server = one if n % 2 == 0 else two
            assert (
                say(server.url, cid, f"Add chore {n}").json()["reply"] == f"Created task: chore {n}"
            )
        asked = say(one.url, cid, "Delete task 1")
        assert asked.json()["awaiting_confirmation"]
        assert say(two.url, cid, "yes").json()["reply"].startswith("Deleted task 1")
        for server in (one, two):
            state = httpx.get(f"{server.url}/v1/conversations/{cid}", headers=ANN).json()
            assert state["stats"]["turns"] == 7  # the "yes" answers turn 7
            log = httpx.get(f"{server.url}/v1/conversations/{cid}/messages", headers=ANN).json()
            users = [m["content"] for m in log if m["role"] == "user"]
            assert users == [f"Add chore {n}" for n in range(6)] + ["Delete task 1", "yes"]

        async def burst():
            async with httpx.AsyncClient(timeout=60) as client:
                return await asyncio.gather(
                    *[
                        client.post(
                            f"{s.url}/v1/conversations/{cid}/messages",
                            json={"content": f"Add burst {i}"},
                            headers=ANN,
                        )
                        for i, s in enumerate([one, two] * 4)
                    ]
                )

        answers = asyncio.run(burst())
        ok = [a.status_code for a in answers].count(200)
        assert set(a.status_code for a in answers) <= {200, 409} and ok >= 1
        state = httpx.get(f"{one.url}/v1/conversations/{cid}", headers=ANN).json()
        assert state["stats"]["turns"] == 7 + ok


@contextmanager
def database_down(admin_url: str, name: str) -> Iterator[None]:
    """Refuse and cut every connection to database ``name`` until the block ends."""
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f"ALTER DATABASE {name} ALLOW_CONNECTIONS false")
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name,)
        )
        try:
            yield
        finally:
            admin.execute(f"ALTER DATABASE {name} ALLOW_CONNECTIONS true")


def test_database_outage_gives_503_and_recovers(postgres_server):
    db = new_postgres_database(postgres_server)
    name = db.rsplit("/", 1)[1]
    with keel_server(db, KEEL_API_KEYS=KEYS) as server:
        cid = create(server.url)
        with database_down(postgres_server, name):
            down = say(server.url, cid, "Add milk")
            assert down.status_code == 503, down.text
            assert down.json()["error"]["code"] == "database_unavailable"
            assert "Traceback" not in down.text
            assert httpx.get(f"{server.url}/readyz").status_code == 503
        for _ in range(20):
            back = say(server.url, cid, "Add milk")
            if back.status_code == 200:
                break
        assert back.status_code == 200 and back.json()["reply"] == "Created task: milk"
        assert httpx.get(f"{server.url}/readyz").status_code == 200


def test_serve_refuses_a_public_bind_without_keys(tmp_path):
    result = run_keel(f"sqlite:///{tmp_path / 'k.db'}", ["serve", "--host", "0.0.0.0"])
    assert result.returncode == 2
    assert "KEEL_API_KEYS is empty" in result.stdout + result.stderr


def test_without_keys_a_request_with_no_token_is_local(tmp_path):
    with keel_server(f"sqlite:///{tmp_path / 'k.db'}") as server:
        cid = create(server.url, headers={})
        assert server_say(server, cid, "Add milk", {}).status_code == 200
        assert [t["title"] for t in httpx.get(f"{server.url}/v1/tasks").json()] == ["milk"]


def test_the_readme_curl_session_works_as_written_and_leaves_the_pages_tasks_alone(tmp_path):
    text = open("README.md").read()
    block = text.split("```sh\n# the curl session\n", 1)[1].split("```", 1)[0]
    with keel_server(f"sqlite:///{tmp_path / 'k.db'}") as server:
        mine = create(server.url, {})  # the page's user, who has tasks of their own
        for content in ("Add walk the dog", "Add call mum"):
            assert server_say(server, mine, content, {}).status_code == 200
        result = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", block],
            capture_output=True,
            text=True,
            env={"KEEL": server.url, "PATH": "/usr/bin:/bin"},
            timeout=120,
        )
        listed = httpx.get(f"{server.url}/v1/tasks", timeout=30).json()  # the page's user's
    assert result.returncode == 0, result.stderr
    replies = [json.loads(line)["reply"] for line in result.stdout.splitlines()]
    assert replies == [
        "Created task: buy milk",
        "Your tasks:\n- [ ] 1. buy milk",
        "Are you sure you want to delete task 1? (yes/no)\nDelete task 1 - buy milk",
        "Deleted task 1: buy milk",
    ]
    assert [t["title"] for t in listed] == ["walk the dog", "call mum"]


def test_without_keys_a_bearer_token_names_a_local_user_of_its_own(tmp_path):
    with keel_server(f"sqlite:///{tmp_path / 'k.db'}") as server:
        tried = {"authorization": "Bearer local:try-1"}
        cid = create(server.url, tried)
        assert server_say(server, cid, "Add buy milk", tried).status_code == 200
        assert server_say(server, cid, "Add eggs", {}).status_code == 404  # not local's
        theirs = httpx.get(f"{server.url}/v1/tasks", headers=tried, timeout=30).json()
        local = httpx.get(f"{server.url}/v1/tasks", timeout=30).json()
        odd = httpx.get(f"{server.url}/v1/tasks", headers={"authorization": "Bearer local:a/b"})
        other = httpx.get(f"{server.url}/v1/tasks", headers={"authorization": "Bearer ann-key"})
    assert [t["title"] for t in theirs] == ["buy milk"] and local == []
    assert odd.status_code == 401 and "local:NAME" in odd.json()["error"]["message"]
    assert other.status_code == 200 and other.json() == []  # a key for another server: local


async def test_a_websocket_turn_that_fails_answers_an_error_frame_and_keeps_the_socket(
    postgres_server,
):
    import json

    import websockets

    db = new_postgres_database(postgres_server)
    name = db.rsplit("/", 1)[1]
    with keel_server(db, KEEL_API_KEYS=KEYS) as server:
        cid = create(server.url)
        ws_url = server.url.replace("http", "ws") + f"/v1/conversations/{cid}/ws"
        async with websockets.connect(ws_url, additional_headers=ANN) as ws:
            await ws.recv()  # connected
            with database_down(postgres_server, name):
                await ws.send(json.dumps({"content": "Add milk"}))
                frame = json.loads(await ws.recv())
                while frame["type"] != "error":
                    frame = json.loads(await ws.recv())
                assert frame["data"]["code"] == "database_unavailable", frame
            for _ in range(20):  # the same socket serves the next message once the database is back
                await ws.send(json.dumps({"content": "Add milk"}))
                frame = json.loads(await ws.recv())
                while frame["type"] not in ("chat", "error"):
                    frame = json.loads(await ws.recv())
                if frame["type"] == "chat":
                    break
            assert frame["type"] == "chat" and frame["data"]["reply"] == "Created task: milk"
