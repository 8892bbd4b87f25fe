"""The service's edges against a real `keel serve`, spoken to as a hostile client would: half-sent
requests, huge bodies, foreign hosts, the headers of every answer, and the metrics of a dead
worker."""

import json
import os
import signal
import socket
import tempfile
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import new_postgres_database
from tests.integration.conftest import ANN, KEYS
from tests.integration.server import keel_server

HUGE = 50 << 20
UNKNOWN = "6f1c1a9e-0c57-4d3e-9a52-2f9b0f0c3b11"


@pytest.fixture(scope="module")
def local(tmp_path_factory):
    """A server with no keys, short deadlines, and one more name it answers for."""
    db = f"sqlite:///{tmp_path_factory.mktemp('edges') / 'k.db'}"
    with keel_server(
        db,
        KEEL_HEADER_TIMEOUT_SECONDS="2",
        KEEL_BODY_TIMEOUT_SECONDS="2",
        KEEL_KEEP_ALIVE_SECONDS="1",
        KEEL_ALLOWED_HOSTS="keel.lan",
    ) as running:
        yield running


@pytest.fixture(scope="module")
def keyed(tmp_path_factory):
    db = f"sqlite:///{tmp_path_factory.mktemp('edges') / 'k.db'}"
    with keel_server(db, KEEL_API_KEYS=KEYS) as running:
        yield running


def connect(server) -> socket.socket:
    host, port = server.url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=1)


def port_of(server) -> str:
    return server.url.rsplit(":", 1)[1]


def held(sock: socket.socket, trickle: bytes | None, cap: float = 20) -> tuple[float, bytes]:
    """Seconds until the server closed ``sock`` (sending ``trickle`` every half second), and
    what it answered."""
    start, got = time.monotonic(), b""
    while time.monotonic() - start < cap:
        try:
            data = sock.recv(65536)
            if not data:
                break
            got += data
        except TimeoutError:
            pass
        except ConnectionError:
            break
        if trickle:
            try:
                sock.sendall(trickle)
            except OSError:
                break
            time.sleep(0.5)
    sock.close()
    return time.monotonic() - start, got


def answer_of(raw: bytes) -> tuple[int, dict[str, str], bytes]:
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), {k.lower(): v for k, v in headers.items()}, body


def test_a_request_whose_headers_trickle_in_is_answered_408_and_closed(local):
    sock = connect(local)
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    seconds, got = held(sock, trickle=b"X-More: 1\r\n")
    status, headers, body = answer_of(got)
    assert status == 408 and headers["connection"] == "close"
    assert json.loads(body)["error"]["code"] == "request_timeout"
    assert seconds < 10  # the deadline is 2 s; it was held for good before


def test_a_connection_that_sends_nothing_is_closed(local):
    seconds, got = held(connect(local), trickle=None)
    assert got == b"" and seconds < 10  # KEEL_KEEP_ALIVE_SECONDS is 1 here


def test_a_body_that_trickles_in_is_answered_408_and_closed(local):
    sock = connect(local)
    sock.sendall(
        b"POST /v1/conversations HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"
    )
    seconds, got = held(sock, trickle=b" ")
    assert answer_of(got)[0] == 408 and seconds < 10


def test_half_sent_requests_give_their_connections_back(tmp_path):
    env = {"KEEL_MAX_CONNECTIONS": "5", "KEEL_HEADER_TIMEOUT_SECONDS": "1"}
    with keel_server(f"sqlite:///{tmp_path / 'k.db'}", **env) as server:
        stuck = [connect(server) for _ in range(8)]  # more than the server holds
        for sock in stuck[:4]:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        try:
            deadline = time.monotonic() + 20
            while httpx.get(f"{server.url}/healthz").status_code != 200:
                assert time.monotonic() < deadline, "the stuck connections were never closed"
                time.sleep(0.2)
        finally:
            for sock in stuck:  # still open on this side: the server let go of them
                sock.close()


def test_a_get_on_mcp_is_refused_rather_than_held_open(keyed):
    answer = httpx.get(f"{keyed.url}/mcp/", headers=ANN, timeout=5)
    assert answer.status_code == 405 and answer.headers["allow"] == "POST"
    assert answer.json()["error"]["code"] == "method_not_allowed"
    assert httpx.get(f"{keyed.url}/mcp/", timeout=5).status_code == 401


def send_headers_only(server, path: str, headers: bytes) -> tuple[int, dict[str, str], bytes]:
    """Say a 50 MB body follows, send none of it, and read the answer."""
    sock = connect(server)
    sock.settimeout(10)
    sock.sendall(
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {HUGE}\r\n".encode()
        + headers
        + b"\r\n"
    )
    _, got = held(sock, trickle=None, cap=10)
    return answer_of(got)


def test_a_body_without_a_key_is_refused_before_it_is_read(keyed):
    status, headers, body = send_headers_only(keyed, "/v1/conversations", b"")
    assert status == 401 and headers["connection"] == "close"
    assert json.loads(body)["error"]["code"] == "unauthorized"


@pytest.mark.parametrize("path", [f"/v1/conversations/{UNKNOWN}/messages", "/mcp/"])
def test_a_body_over_the_limit_is_refused_from_its_length(keyed, path):
    status, headers, body = send_headers_only(keyed, path, b"Authorization: Bearer ann-key\r\n")
    assert status == 413 and headers["connection"] == "close"
    assert json.loads(body)["error"]["code"] == "body_too_large"


def test_a_body_of_no_declared_length_is_refused_once_over_the_limit(keyed):
    sock = connect(keyed)
    sock.sendall(
        f"POST /v1/conversations/{UNKNOWN}/messages HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        "Content-Type: application/json\r\nAuthorization: Bearer ann-key\r\n"
        "Transfer-Encoding: chunked\r\n\r\n".encode()
    )
    chunk = b"a" * 65536
    sent, got = 0, b""
    while sent < HUGE and not got:
        try:
            sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            sent += len(chunk)
            sock.settimeout(0.001)
            got = sock.recv(65536)
        except TimeoutError:
            pass
        except ConnectionError:
            break
        finally:
            sock.settimeout(1)
    _, rest = held(sock, trickle=None, cap=10)
    status, _, body = answer_of(got + rest)
    assert status == 413 and json.loads(body)["error"]["code"] == "body_too_large"
    assert sent < HUGE  # answered while the body was still coming


def test_a_body_within_the_limit_is_served(keyed):
    answer = httpx.post(f"{keyed.url}/v1/conversations", json={}, headers=ANN)
    assert answer.status_code == 201


@pytest.mark.parametrize(
    "host", ["attacker.example", "attacker.example:8000", "127.0.0.1.attacker.example", ""]
)
def test_a_local_server_refuses_requests_for_other_hosts(local, host):
    headers = {"Host": host}
    with httpx.Client(base_url=local.url, headers=headers) as client:
        answers = [
            client.post("/v1/conversations", json={}),
            client.get("/v1/tasks"),
            client.get("/docs"),
            client.get("/healthz"),
            client.post("/mcp/", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        ]
    for answer in answers:
        assert answer.status_code == 421, answer.request.url
        assert answer.json()["error"]["code"] == "misdirected_request"
    assert "KEEL_ALLOWED_HOSTS" in answers[0].json()["error"]["message"]


@pytest.mark.parametrize("name", ["127.0.0.1", "localhost", "[::1]", "LOCALHOST", "keel.lan"])
def test_a_local_server_answers_for_its_own_names(local, name):
    answer = httpx.get(f"{local.url}/v1/tasks", headers={"Host": f"{name}:{port_of(local)}"})
    assert answer.status_code == 200, answer.text


def test_a_page_of_another_origin_is_refused(local):
    foreign = httpx.post(
        f"{local.url}/v1/conversations", json={}, headers={"Origin": "http://attacker.example"}
    )
    assert foreign.status_code == 403
    assert foreign.json()["error"]["code"] == "forbidden_origin"
    own = httpx.post(
        f"{local.url}/v1/conversations",
        json={},
        headers={"Origin": f"http://localhost:{port_of(local)}"},
    )
    assert own.status_code == 201


def test_a_websocket_for_another_host_never_opens(local):
    cid = httpx.post(f"{local.url}/v1/conversations", json={}).json()["conversation_id"]
    sock = connect(local)
    sock.sendall(
        f"GET /v1/conversations/{cid}/ws HTTP/1.1\r\nHost: attacker.example\r\n"
        "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n".encode()
    )
    _, got = held(sock, trickle=None, cap=10)
    assert got.startswith(b"HTTP/1.1 403")


def test_with_keys_any_host_is_served(keyed):
    answer = httpx.get(f"{keyed.url}/v1/tasks", headers={**ANN, "Host": "keel.example.com"})
    assert answer.status_code == 200


def test_every_answer_says_nosniff(keyed):
    cid = httpx.post(f"{keyed.url}/v1/conversations", json={}, headers=ANN).json()
    answers = [
        httpx.get(f"{keyed.url}/v1/tasks", headers=ANN),
        httpx.get(f"{keyed.url}/v1/tasks"),
        httpx.get(f"{keyed.url}/v1/conversations/{UNKNOWN}", headers=ANN),
        httpx.post(
            f"{keyed.url}/v1/conversations/{cid['conversation_id']}/messages",
            json={},
            headers=ANN,
        ),
        httpx.get(f"{keyed.url}/no-such-page"),
        httpx.get(f"{keyed.url}/healthz"),
        httpx.get(f"{keyed.url}/openapi.json"),
        httpx.get(f"{keyed.url}/metrics", headers=ANN),
        httpx.get(f"{keyed.url}/"),
    ]
    assert [a.status_code for a in answers] == [200, 401, 404, 422, 404, 200, 200, 200, 200]
    for answer in answers:
        assert answer.headers["x-content-type-options"] == "nosniff", answer.request.url


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_the_reference_pages_cannot_be_framed(keyed, page):
    answer = httpx.get(f"{keyed.url}{page}")
    policy = answer.headers["content-security-policy"]
    assert answer.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in policy and "default-src 'self'" in policy
    assert "unsafe-eval" not in policy and "script-src 'self'" in policy
    assert answer.headers["x-content-type-options"] == "nosniff"


def children(pid: int) -> list[int]:
    """The worker processes of a `keel serve --workers N`: forks of it, which run its command."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_bytes().rsplit(b")", 1)[1].split()
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if int(stat[1]) == pid and command == (Path("/proc") / str(pid) / "cmdline").read_bytes():
            found.append(int(entry.name))
    return found


def metrics_dir_of(server_pid: int) -> Path:
    """The directory a `keel serve` made for its workers to count in (in the temporary one)."""
    (directory,) = Path(tempfile.gettempdir()).glob(f"keel-metrics-{server_pid}-*")
    return directory


def wait_for(check, seconds: float = 180) -> None:
    """As long as a started server may take to be ready: a worker starting on a busy machine."""
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "never happened"
        time.sleep(0.2)


def test_a_dead_workers_gauges_are_retired_and_the_directory_removed(postgres_server):
    url = new_postgres_database(postgres_server)
    with keel_server(url, workers=2, KEEL_API_KEYS=KEYS) as server:
        wait_for(lambda: len(children(server.process.pid)) == 2)
        workers = children(server.process.pid)
        directory = metrics_dir_of(server.process.pid)

        def gauges() -> set[int]:
            return {int(p.stem.rsplit("_", 1)[1]) for p in directory.glob("gauge_livesum_*.db")}

        def scraped_by_both() -> bool:  # each scrape is answered by one worker
            nonlocal workers  # uvicorn replaces a worker that missed its health check (load)
            httpx.get(f"{server.url}/metrics", headers=ANN)
            workers = children(server.process.pid)
            return gauges() == set(workers)

        wait_for(scraped_by_both)
        os.kill(workers[0], signal.SIGKILL)
        wait_for(lambda: workers[0] not in gauges())
        wait_for(lambda: len(children(server.process.pid)) == 2)  # uvicorn replaced it
        assert httpx.get(f"{server.url}/metrics", headers=ANN).status_code == 200
    assert not directory.exists()
