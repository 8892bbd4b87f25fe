"""A database that cannot take writes: a clear 503 on every write and on /readyz, and back to
normal once it can, with no restart (a real `keel serve` on SQLite on a small disk of its own)."""

import http.client
import os
import sqlite3
import subprocess
import uuid

import httpx
import psycopg
import pytest

from keel.checkpoints.trouble import trouble_of
from tests.integration.server import keel_server


@pytest.fixture
def small_disk(tmp_path):
    """An 8 MB file system for the database (a tmpfs: mounting needs root)."""
    where = tmp_path / "disk"
    where.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(where)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small disk here: {mounted.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def post(server, cid, content, key):
    return httpx.post(
        f"{server.url}/v1/conversations/{cid}/messages",
        json={"content": content},
        headers={"Idempotency-Key": key},
        timeout=60,
    )


def test_a_full_disk_answers_503_database_full_and_recovers_without_a_restart(small_disk):
    with keel_server(f"sqlite:///{small_disk / 'keel.db'}") as server:
        cid = httpx.post(f"{server.url}/v1/conversations", json={}).json()["conversation_id"]
        assert post(server, cid, "Add tea", str(uuid.uuid4())).status_code == 200
        filler = small_disk / "filler"
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
        try:  # fill the disk to the last byte
            while os.write(fd, b"\0" * 4096):
                pass
        except OSError:
            pass
        finally:
            os.close(fd)
        key = str(uuid.uuid4())
        refused = post(server, cid, "Add coffee", key)
        assert refused.status_code == 503
        assert refused.json()["error"]["code"] == "database_full"
        assert refused.headers["retry-after"] == "1"
        kept = http.client.HTTPConnection(server.url.removeprefix("http://"), timeout=60)
        body, headers = '{"content": "Add jam"}', {"Content-Type": "application/json"}
        kept.request("POST", f"/v1/conversations/{cid}/messages", body, headers)
        answer = kept.getresponse()
        assert answer.status == 503 and not answer.will_close  # the connection stays open
        answer.read()
        first_socket = kept.sock
        kept.request("GET", "/healthz")
        assert kept.getresponse().status == 200 and kept.sock is first_socket
        kept.close()
        ready = httpx.get(f"{server.url}/readyz")
        assert ready.status_code == 503 and ready.json()["error"]["code"] == "database_full"
        os.remove(filler)
        assert httpx.get(f"{server.url}/readyz").status_code == 200
        again = post(server, cid, "Add coffee", key)  # the retry, with the same key
        assert again.status_code == 200, again.text
        tasks = httpx.get(f"{server.url}/v1/tasks").json()
        assert [t["title"] for t in tasks] == ["tea", "coffee"]


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (sqlite3.OperationalError("attempt to write a readonly database"), "database_read_only"),
        (sqlite3.OperationalError("database or disk is full"), "database_full"),
        (sqlite3.OperationalError("database is locked"), "database_unavailable"),
        (psycopg.errors.ReadOnlySqlTransaction("read-only transaction"), "database_read_only"),
        (psycopg.errors.DiskFull("could not extend file"), "database_full"),
        (psycopg.OperationalError("server closed the connection"), "database_unavailable"),
        (sqlite3.OperationalError("no such table: keel_tasks"), None),
        (ValueError("bad"), None),
    ],
)
def test_each_way_a_database_cannot_serve_has_its_code(error, code):
    trouble = trouble_of(error)
    assert (trouble.value if trouble else None) == code
    if trouble:
        assert str(error) not in trouble.message  # the database's own words never reach a client
