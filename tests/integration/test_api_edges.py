"""Edges of the HTTP API against a real `keel serve`: the log read a page at a time, WebSocket
frames that REST would take, and a legacy session that cannot be stored."""

import json
import uuid

import httpx
import websockets

from tests.integration.conftest import ANN
from tests.integration.test_api import new_conversation, say


def pages(server, cid, **params):
    """Every page of the log, following the Link header."""
    url, seen = f"{server.url}/v1/conversations/{cid}/messages", []
    query = dict(params)
    while True:
        answer = httpx.get(url, params=query, headers=ANN)
        assert answer.status_code == 200, answer.text
        seen.append([m["id"] for m in answer.json()])
        if "link" not in answer.headers:
            assert "x-next-cursor" not in answer.headers
            return seen
        assert answer.headers["link"].endswith('>; rel="next"')
        query = {**query, "cursor": answer.headers["x-next-cursor"]}


def test_the_log_is_read_a_page_at_a_time_either_way(server_url):
    cid = new_conversation(server_url)
    for n in range(4):
        say(server_url, cid, f"Add chore {n}")
    everything = [
        m["id"]
        for m in httpx.get(f"{server_url.url}/v1/conversations/{cid}/messages", headers=ANN).json()
    ]
    assert len(everything) == 12 and everything == sorted(everything)  # user, tool, reply
    oldest = pages(server_url, cid, limit=5)
    assert [len(p) for p in oldest] == [5, 5, 2]
    assert sum(oldest, []) == everything
    newest = pages(server_url, cid, limit=4, order="newest")
    assert sum(newest, []) == everything[::-1]
    assert [len(p) for p in newest] == [4, 4, 4]  # the last full page says no more
    for bad in ({"limit": 0}, {"limit": 1001}, {"cursor": -1}, {"order": "sideways"}):
        answer = httpx.get(
            f"{server_url.url}/v1/conversations/{cid}/messages", params=bad, headers=ANN
        )
        assert answer.status_code == 422, bad


async def test_the_websocket_takes_the_ids_rest_takes_and_names_unreadable_json(server_url):
    cid = new_conversation(server_url)
    for spelling in (cid.upper(), cid.replace("-", "")):
        ws_url = server_url.url.replace("http", "ws") + f"/v1/conversations/{spelling}/ws"
        async with websockets.connect(ws_url, additional_headers=ANN) as ws:
            hello = json.loads(await ws.recv())
            assert hello["data"] == {"status": "connected", "conversation_id": cid}
            await ws.send("[" * 100_000 + "]" * 100_000)
            nested = json.loads(await ws.recv())
            assert nested["data"]["code"] == "invalid_json"
            await ws.send(json.dumps({"content": "What's on my list?"}))
            while (frame := json.loads(await ws.recv()))["type"] != "chat":
                pass
            assert frame["data"]["conversation_id"] == cid


def test_a_legacy_session_that_cannot_be_stored_is_refused_and_leaves_nothing(server_url):
    before = httpx.get(f"{server_url.url}/v1/conversations", headers=ANN).json()
    for flag in (2**64, -(2**64)):
        answer = httpx.post(
            f"{server_url.url}/v1/conversations",
            json={"legacy_session": {"completed": flag}},
            headers=ANN,
        )
        assert answer.status_code == 422, answer.text
    after = httpx.get(f"{server_url.url}/v1/conversations", headers=ANN).json()
    assert after == before
    fine = httpx.post(
        f"{server_url.url}/v1/conversations",
        json={"legacy_session": {"completed": 2**63 - 1}},
        headers=ANN,
    )
    assert fine.status_code == 201
    uuid.UUID(fine.json()["conversation_id"])
