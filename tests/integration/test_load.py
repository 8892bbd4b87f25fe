"""keel serve under load and hostile clients: no pool starvation, no stranded turn locks.

Real `keel serve` processes on SQLite and a throwaway PostgreSQL: many concurrent clients on a
deliberately small pool, clients that leave mid-turn (SSE, WebSocket), and a server killed with
SIGKILL in the middle of a burst.
"""

import asyncio
import json
import time
from collections import Counter

import httpx
import pytest
import websockets

from keel.checkpoints.messages import MessageLog
from keel.tools.tasks.store import TaskStore
from tests.conftest import new_postgres_database
from tests.helpers import open_database
from tests.integration.conftest import ANN, KEYS
from tests.integration.server import keel_server

POOL_TIMEOUT = 3.0
CLIENTS = 64
TURNS = 10
SHARED = 8
"""Clients that talk to a conversation another client also talks to (so some turns meet 409)."""


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'keel.db'}"
    return new_postgres_database(request.getfixturevalue("postgres_server"))


async def create(client: httpx.AsyncClient, url: str) -> str:
    answer = await client.post(f"{url}/v1/conversations", json={}, headers=ANN)
    assert answer.status_code == 201, answer.text
    return answer.json()["conversation_id"]


async def post(client: httpx.AsyncClient, url: str, cid: str, content: str) -> httpx.Response:
    return await client.post(
        f"{url}/v1/conversations/{cid}/messages", json={"content": content}, headers=ANN
    )


async def logged_and_tasks(database_url: str, cids: list[str]):
    async with open_database(database_url) as db:
        log = MessageLog(db)
        said = Counter()
        for cid in cids:
            said.update(m.content for m in await log.page(cid, limit=10_000) if m.role == "user")
        titles = Counter(t["title"] for t in await TaskStore(db).list("ann"))
    return said, titles


def test_64_clients_on_a_pool_of_two_get_answers_never_500(postgres_server):
    database_url = new_postgres_database(postgres_server)
    env = {
        "KEEL_API_KEYS": KEYS,
        "KEEL_DB_POOL_SIZE": "2",
        "KEEL_DB_POOL_TIMEOUT_SECONDS": str(POOL_TIMEOUT),
    }
    with keel_server(database_url, **env) as server:

        async def client(n: int, cid: str) -> list[tuple[str, httpx.Response | Exception, float]]:
            out = []
            limits = httpx.Limits(max_connections=1)
            async with httpx.AsyncClient(timeout=60, limits=limits) as http:
                for k in range(TURNS):
                    content = f"Add item-{n}-{k}"
                    start = time.monotonic()
                    try:
                        answer: httpx.Response | Exception = await post(
                            http, server.url, cid, content
                        )
                    except httpx.HTTPError as exc:
                        answer = exc
                    out.append((content, answer, time.monotonic() - start))
            return out

        async def run():
            async with httpx.AsyncClient(timeout=60) as http:
                cids = [await create(http, server.url) for _ in range(CLIENTS - SHARED)]
            owners = cids + cids[:SHARED]  # the last SHARED clients share a conversation
            results = await asyncio.gather(*(client(n, cid) for n, cid in enumerate(owners)))
            return cids, [r for rs in results for r in rs]

        cids, results = asyncio.run(run())

    failures = [(c, a) for c, a, _ in results if isinstance(a, Exception)]
    assert failures == []  # every request was answered, none timed out on the client
    statuses = Counter(a.status_code for _, a, _ in results)
    assert set(statuses) <= {200, 409, 503}, statuses
    assert statuses[200] > 0
    for _, answer, _ in results:
        if answer.status_code != 200:
            assert answer.headers.get("retry-after"), answer.text
            assert answer.json()["error"]["code"] in ("conversation_busy", "database_unavailable")
    # every wait is bounded: a turn waits for a pooled connection at most POOL_TIMEOUT at a time
    assert max(elapsed for _, _, elapsed in results) < 30

    acknowledged = [c for c, a, _ in results if a.status_code == 200]
    said, titles = asyncio.run(logged_and_tasks(database_url, cids))
    for content in acknowledged:
        assert said[content] == 1, content
        assert titles[content.removeprefix("Add ")] == 1, content
    assert all(count == 1 for count in titles.values())  # nothing unacknowledged ran twice


async def served_within_seconds(http, url, cid, content, seconds=5.0) -> list[int]:
    """Post until the answer is not 409, for at most ``seconds``; the statuses seen."""
    statuses = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        statuses.append((await post(http, url, cid, content)).status_code)
        if statuses[-1] != 409:
            break
        await asyncio.sleep(0.2)
    return statuses


async def test_a_client_that_leaves_mid_turn_does_not_strand_the_conversation(db_url):
    with keel_server(db_url, KEEL_API_KEYS=KEYS) as server:
        async with httpx.AsyncClient(timeout=30) as http:
            cid = await create(http, server.url)
            # SSE: read one frame, then hang up
            async with http.stream(
                "POST",
                f"{server.url}/v1/conversations/{cid}/messages",
                json={"content": "Add by sse"},
                headers={**ANN, "Accept": "text/event-stream"},
            ) as stream:
                assert stream.status_code == 200
                async for line in stream.aiter_lines():
                    if line.startswith("data:"):
                        break
            seen = await served_within_seconds(http, server.url, cid, "Add after sse")
            assert seen[-1] == 200, seen
            # WebSocket: send a message, hang up without reading the answer
            ws_url = server.url.replace("http", "ws") + f"/v1/conversations/{cid}/ws"
            async with websockets.connect(ws_url, additional_headers=ANN) as ws:
                await ws.recv()  # connected
                await ws.send(json.dumps({"content": "Add by websocket"}))
            seen = await served_within_seconds(http, server.url, cid, "Add after websocket")
            assert seen[-1] == 200, seen
            listed = (await post(http, server.url, cid, "Show all")).json()["reply"]
    # the turns of the clients that left ran to their end
    for title in ("by sse", "after sse", "by websocket", "after websocket"):
        assert title in listed, listed


async def test_kill_9_in_a_burst_then_restart_answers_every_conversation(db_url):
    conversations = 8
    with keel_server(db_url, KEEL_API_KEYS=KEYS) as first:
        async with httpx.AsyncClient(timeout=30) as http:
            cids = [await create(http, first.url) for _ in range(conversations)]
            for n, cid in enumerate(cids):
                assert (await post(http, first.url, cid, f"Add before-{n}")).status_code == 200

    # the first turn to commit its tool call freezes this server; the others are cut off wherever
    # they are; then the process is killed
    with keel_server(db_url, KEEL_API_KEYS=KEYS, KEEL_PAUSE_AT="after_tool_commit") as doomed:
        async with httpx.AsyncClient(timeout=3) as http:
            burst = await asyncio.gather(
                *(post(http, doomed.url, cid, f"Add burst-{n}") for n, cid in enumerate(cids)),
                return_exceptions=True,
            )
        assert all(isinstance(answer, httpx.TimeoutException) for answer in burst)
        doomed.process.kill()
        doomed.process.wait(10)

    with keel_server(db_url, KEEL_API_KEYS=KEYS) as restarted:
        async with httpx.AsyncClient(timeout=30) as http:
            answers = [await post(http, restarted.url, cid, "Show all") for cid in cids]
    assert [a.status_code for a in answers] == [200] * conversations  # no 409 wall
    recovered = [a.json()["recovered_reply"] for a in answers]
    finished = [n for n, reply in enumerate(recovered) if reply == f"Created task: burst-{n}"]
    assert finished  # at least the turn frozen after its tool commit was finished

    said, titles = await logged_and_tasks(db_url, cids)
    for n in range(conversations):
        assert said[f"Add before-{n}"] == 1 and titles[f"before-{n}"] == 1
        assert titles[f"burst-{n}"] <= 1  # a cut-off tool call never runs twice
        listed = answers[n].json()["reply"]
        assert (f"burst-{n}" in listed) == (titles[f"burst-{n}"] == 1)
        if n in finished:
            assert said[f"Add burst-{n}"] == 1


def test_workers_starting_together_on_a_new_database_both_come_up(postgres_server):
    from concurrent.futures import ThreadPoolExecutor
    from contextlib import ExitStack

    database_url = new_postgres_database(postgres_server)
    with ExitStack() as stack, ThreadPoolExecutor(2) as pool:
        starts = [
            pool.submit(stack.enter_context, keel_server(database_url, KEEL_API_KEYS=KEYS))
            for _ in range(2)
        ]
        servers = [start.result(timeout=120) for start in starts]
        for server in servers:
            assert httpx.get(f"{server.url}/readyz", timeout=5).status_code == 200


async def test_a_lock_attempt_cancelled_midway_leaves_no_lock_behind(postgres_server):
    import psycopg

    from keel.checkpoints.locks import TurnLocks
    from keel.checkpoints.process_locks import AdvisoryLocks

    database_url = new_postgres_database(postgres_server)
    locks = TurnLocks(AdvisoryLocks(database_url))

    async def turn(cid: str) -> None:
        async with locks.hold(cid):
            await asyncio.sleep(0.002)

    for n in range(300):  # cancelled at every point: waiting, mid-query, holding, releasing
        attempt = asyncio.create_task(turn(f"c-{n % 7}"))
        await asyncio.sleep((n % 6) * 0.0004)
        attempt.cancel()
        await asyncio.gather(attempt, return_exceptions=True)
    await asyncio.sleep(0.5)  # let given-back locks go
    with psycopg.connect(database_url) as conn:
        held = conn.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'").fetchone()
    await locks.close()
    assert held[0] == 0
