"""Pooled PostgreSQL connections that died while idle are replaced before a request gets one."""

import concurrent.futures
import time

import httpx
import psycopg

from tests.conftest import new_postgres_database
from tests.integration.server import keel_server

IDLE = 1.5
"""Longer than the pool's idle check (a second): the connections count as idle."""


def test_requests_after_the_servers_connections_were_cut_all_succeed(postgres_server):
    url = new_postgres_database(postgres_server)
    database = url.rsplit("/", 1)[1]
    with keel_server(url, KEEL_DB_POOL_SIZE="6") as server:
        cid = httpx.post(f"{server.url}/v1/conversations", json={}).json()["conversation_id"]
        read = f"{server.url}/v1/conversations/{cid}/messages"
        with concurrent.futures.ThreadPoolExecutor(6) as pool:  # open several pooled connections
            assert {a.status_code for a in pool.map(lambda _: httpx.get(read), range(24))} == {200}
        time.sleep(IDLE)
        with psycopg.connect(postgres_server, autocommit=True) as admin:
            cut = admin.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE datname = %s AND pid <> pg_backend_pid()",
                (database,),
            ).fetchone()[0]
        assert cut >= 2  # the pool's connections (and the turn-lock session) are gone
        answers = [httpx.get(read).status_code for _ in range(12)]
        answers.append(
            httpx.post(
                f"{server.url}/v1/conversations/{cid}/messages", json={"content": "Add tea"}
            ).status_code
        )
        assert answers == [200] * 13
