"""Eight clients share one conversation while the server is killed (SIGKILL) again and again.

Every client retries each message with its Idempotency-Key until it is answered, as the API
tells clients to. Whatever the kills cut off - a turn mid-way, a turn ended but not yet noted,
a message never reached - every acknowledged message ran exactly once: one task, one logged user
message, on SQLite and on PostgreSQL.
"""

import asyncio
import signal
import subprocess
import tempfile
import uuid
from collections import Counter

import httpx
import pytest

from tests.conftest import new_postgres_database
from tests.integration.server import free_port, stop, wait_until_ready
from tests.keel_process import KEEL, ROOT, keel_env

CLIENTS = 8
ACKNOWLEDGED = 200
"""Messages answered in all before the test stops killing the server: about ten kills fall among
them, each wherever the eight clients' turns had reached."""
KILL_EVERY_SECONDS = 1.0
TRIES = 2000


@pytest.fixture(params=["sqlite", "postgres"])
def durable_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'keel.db'}"
    return new_postgres_database(request.getfixturevalue("postgres_server"))


class Restarted:
    """``keel serve`` on one port, killed with SIGKILL and started again on demand."""

    def __init__(self, database_url: str) -> None:
        self.port, self.database_url = free_port(), database_url
        self.url = f"http://127.0.0.1:{self.port}"
        self.output = tempfile.TemporaryFile(mode="w+")
        self.process: subprocess.Popen[str] | None = None
        self.kills = 0

    def start(self) -> None:
        self.process = subprocess.Popen(
            [*KEEL, "serve", "--port", str(self.port)],
            stdout=self.output,
            stderr=subprocess.STDOUT,
            text=True,
            env=keel_env(self.database_url, KEEL_DOUBLE_TEXT="enqueue"),
            cwd=ROOT,
        )
        wait_until_ready(self.process, f"{self.url}/readyz", self.output, "keel serve")

    def kill_and_start(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(30)
        self.kills += 1
        self.start()

    def close(self) -> None:
        if self.process is not None:
            stop(self.process)
        self.output.close()


async def send(http, path, body, headers):
    """POST until it is answered 2xx (retrying what can be retried, with the same headers)."""
    for _ in range(TRIES):
        try:
            answer = await http.post(path, json=body, headers=headers)
        except httpx.TransportError:
            pass  # the server was killed under the request
        else:
            if answer.status_code < 300:
                return answer.json()
            assert answer.status_code in (409, 503), answer.text
        await asyncio.sleep(0.02)
    raise AssertionError(f"{path} was never answered")


async def client(url, cid, n, acknowledged: list[str]):
    async with httpx.AsyncClient(base_url=url, timeout=60) as http:
        k = 0
        while len(acknowledged) < ACKNOWLEDGED:
            text, key = f"Add item {n}-{k}", str(uuid.uuid4())
            path = f"/v1/conversations/{cid}/messages"
            answer = await send(http, path, {"content": text}, {"Idempotency-Key": key})
            assert answer["reply"] == f"Created task: item {n}-{k}", answer
            acknowledged.append(text)
            k += 1


async def test_kills_under_eight_clients_on_one_conversation_double_nothing(durable_url):
    server = Restarted(durable_url)
    try:
        server.start()
        cid = httpx.post(f"{server.url}/v1/conversations", json={}).json()["conversation_id"]
        acknowledged: list[str] = []
        clients = [
            asyncio.create_task(client(server.url, cid, n, acknowledged)) for n in range(CLIENTS)
        ]
        while not all(c.done() for c in clients):
            await asyncio.wait(clients, timeout=KILL_EVERY_SECONDS)
            if not all(c.done() for c in clients):
                await asyncio.to_thread(server.kill_and_start)
        await asyncio.gather(*clients)
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as http:
            titles: Counter[str] = Counter()
            while True:
                tasks = await http.get("/v1/tasks", params={"offset": sum(titles.values())})
                titles.update(t["title"] for t in tasks.json())
                if "next" not in tasks.links:
                    break
            page = f"/v1/conversations/{cid}/messages"
            users: Counter[str] = Counter()
            cursor = None
            while True:
                params = {"cursor": cursor} if cursor is not None else {}
                answer = await http.get(page, params=params)
                users.update(m["content"] for m in answer.json() if m["role"] == "user")
                cursor = answer.headers.get("X-Next-Cursor")
                if cursor is None:
                    break
    finally:
        server.close()
    assert server.kills >= 5, server.kills
    assert len(acknowledged) >= ACKNOWLEDGED
    doubled = {title: n for title, n in titles.items() if n > 1}
    assert not doubled, doubled
    said = {text.removeprefix("Add ") for text in acknowledged}
    assert said <= set(titles)
    logged_twice = {text: n for text, n in users.items() if n > 1}
    assert not logged_twice, logged_twice
    assert set(acknowledged) <= set(users)
