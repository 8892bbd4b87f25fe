"""WebSockets are bounded: a silent one is closed, a user may hold only so many, a huge frame is
refused (a real `keel serve`)."""

import asyncio
import contextlib
import json
import socket

import httpx
import pytest
import websockets

from tests.integration.server import keel_server


@pytest.fixture
def server(tmp_path):
    with keel_server(f"sqlite:///{tmp_path / 'keel.db'}", KEEL_WS_IDLE_SECONDS="1") as server:
        yield server


@pytest.fixture
def server_of_two(tmp_path):
    with keel_server(f"sqlite:///{tmp_path / 'keel.db'}", KEEL_WS_PER_USER="2") as server:
        yield server


def socket_url(server) -> str:
    cid = httpx.post(f"{server.url}/v1/conversations", json={}).json()["conversation_id"]
    return server.url.replace("http", "ws") + f"/v1/conversations/{cid}/ws"


async def test_a_silent_socket_is_closed_with_a_reason(server):
    async with websockets.connect(socket_url(server)) as ws:
        assert json.loads(await ws.recv())["data"]["status"] == "connected"
        said = json.loads(await ws.recv())  # nothing sent: the server speaks once, then closes
        assert said == {
            "type": "error",
            "data": {
                "code": "idle_timeout",
                "message": "closed after a silence (KEEL_WS_IDLE_SECONDS)",
            },
        }
        with pytest.raises(websockets.ConnectionClosed) as closed:
            await ws.recv()
    assert closed.value.rcvd.code == 1001


async def test_a_user_holds_at_most_the_allowed_sockets(server_of_two):
    url = socket_url(server_of_two)
    async with websockets.connect(url) as first, websockets.connect(url) as second:
        for ws in (first, second):
            assert json.loads(await ws.recv())["data"]["status"] == "connected"
            await ws.send(json.dumps({"content": "What's on my list?"}))  # keep them busy
        async with websockets.connect(url) as third:
            refused = json.loads(await third.recv())
            assert refused["data"]["code"] == "too_many_connections"
            with pytest.raises(websockets.ConnectionClosed) as closed:
                await third.recv()
            assert closed.value.rcvd.code == 1013
    for _ in range(100):  # the two are closed: there is room again once the server saw it
        async with websockets.connect(url) as again:
            if json.loads(await again.recv())["data"].get("status") == "connected":
                break
        await asyncio.sleep(0.05)
    else:
        raise AssertionError("the closed sockets were never given back")


async def test_the_limit_holds_across_a_servers_workers(tmp_path):
    with keel_server(f"sqlite:///{tmp_path / 'keel.db'}", 3, KEEL_WS_PER_USER="4") as server:
        url = socket_url(server)
        async with contextlib.AsyncExitStack() as sockets:
            said = []
            for _ in range(9):  # each a connection of its own, taken by whichever worker accepts
                ws = await sockets.enter_async_context(websockets.connect(url))
                said.append(json.loads(await ws.recv())["data"])
            connected = [d for d in said if d.get("status") == "connected"]
            refused = [d for d in said if d.get("code") == "too_many_connections"]
            assert (len(connected), len(refused)) == (4, 5)
        async with websockets.connect(url) as again:  # closed ones are given back
            assert json.loads(await again.recv())["data"]["status"] == "connected"


async def test_a_frame_over_a_mebibyte_is_refused(server):
    async with websockets.connect(socket_url(server), max_size=None) as ws:
        await ws.recv()
        await ws.send(json.dumps({"content": "x" * (2 << 20)}))
        with pytest.raises(websockets.ConnectionClosed) as closed:
            while True:
                await ws.recv()
    assert closed.value.rcvd.code == 1009  # message too big


def test_half_sent_requests_cannot_take_every_connection(tmp_path):
    with keel_server(f"sqlite:///{tmp_path / 'keel.db'}", KEEL_MAX_CONNECTIONS="3") as server:
        host, port = server.url.removeprefix("http://").split(":")
        stuck = []
        for _ in range(3):  # requests that never finish their headers
            sock = socket.create_connection((host, int(port)))
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            stuck.append(sock)
        try:
            answer = httpx.get(f"{server.url}/healthz")
            assert answer.status_code == 503  # refused at once, not left waiting
        finally:
            for sock in stuck:
                sock.close()
        for _ in range(100):  # the stuck ones gone, the server answers again
            if httpx.get(f"{server.url}/healthz").status_code == 200:
                break
        else:
            raise AssertionError("the server never answered again")
