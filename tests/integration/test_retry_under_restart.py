"""Retries through PostgreSQL restarts: clients that retry with their Idempotency-Key, as told,
get every message run exactly once (a real `keel serve` on a PostgreSQL cluster of the test's
own, restarted twice under load)."""

import asyncio
import uuid

import httpx

from tests.conftest import new_postgres_database, postgres_cluster
from tests.integration.server import keel_server

CLIENTS = 6
AT_LEAST = 4
"""Messages each client sends at least; they go on until both restarts are over."""
TRIES = 600


async def send(http, path, body, headers, seen):
    """POST until it is answered 2xx, retrying what the API says to retry; the answer."""
    for _ in range(TRIES):
        try:
            answer = await http.post(path, json=body, headers=headers)
        except httpx.TransportError:
            seen["transport"] += 1
        else:
            if answer.status_code < 300:
                return answer.json()
            assert answer.status_code in (409, 503), answer.text
            seen[answer.status_code] += 1
        await asyncio.sleep(0.05)
    raise AssertionError(f"{path} was never answered")


async def under_way(seen: dict) -> None:
    """Wait until the clients have had another message each acknowledged."""
    mark = seen["acknowledged"] + CLIENTS
    for _ in range(TRIES):
        if seen["acknowledged"] >= mark:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"the clients got no further: {seen}")


async def client(url, n, done, seen):
    async with httpx.AsyncClient(base_url=url, timeout=60) as http:
        cid = (await send(http, "/v1/conversations", {}, {}, seen))["conversation_id"]
        sent, k = [], 0
        while k < AT_LEAST or not done.is_set():
            text, key = f"Add item {n}-{k}", str(uuid.uuid4())
            path = f"/v1/conversations/{cid}/messages"
            answer = await send(http, path, {"content": text}, {"Idempotency-Key": key}, seen)
            assert answer["reply"] == f"Created task: item {n}-{k}", answer
            sent.append(text)
            seen["acknowledged"] += 1
            k += 1
        return cid, sent


async def test_messages_retried_with_their_key_through_two_restarts_run_once():
    seen = {"transport": 0, 409: 0, 503: 0, "acknowledged": 0}
    with postgres_cluster() as pg, keel_server(new_postgres_database(pg.url)) as server:
        done = asyncio.Event()
        clients = [asyncio.create_task(client(server.url, n, done, seen)) for n in range(CLIENTS)]
        for _ in range(2):
            await under_way(seen)  # turns are being taken as the database goes (a busy machine
            await asyncio.to_thread(pg.restart)  # may take seconds over the first ones)
        await under_way(seen)
        done.set()
        results = await asyncio.gather(*clients)
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as http:
            titles = [t["title"] for t in (await http.get("/v1/tasks")).json()]
            logs = {
                cid: (await http.get(f"/v1/conversations/{cid}/messages")).json()
                for cid, _ in results
            }
    expected = [text.removeprefix("Add ") for _, sent in results for text in sent]
    assert sorted(titles) == sorted(expected)  # every task once
    for cid, sent in results:
        users = [m["content"] for m in logs[cid] if m["role"] == "user"]
        assert users == sent  # every acknowledged message once, in order
    assert seen[503] + seen["transport"] > 0, seen  # the restarts were met
