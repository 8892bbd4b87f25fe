"""A deleted conversation is gone in every worker at once (`keel serve --workers 4`).

Every worker first serves the conversation (so each has read its owner), then it is deleted:
each later request, on a fresh connection whichever worker takes it, answers 404 and writes
nothing; a WebSocket opened before the delete answers not-found and closes; the conversation is
never listed again, and the delete took everything of it (log, topics, requests, checkpoints).
"""

import asyncio
import json
import uuid

import httpx
import psycopg
import pytest
import websockets

from tests.conftest import new_postgres_database
from tests.integration.server import keel_server

POSTS = 60
WORKERS = 4


def fresh(method: str, url: str, **kw) -> httpx.Response:
    """One request on a connection of its own (the kernel spreads them over the workers)."""
    with httpx.Client(timeout=60) as http:
        return http.request(method, url, **kw)


def rows_of(database_url: str, cid: str) -> dict[str, int]:
    tables = {
        "keel_conversations": "id",
        "keel_messages": "conversation_id",
        "keel_topics": "conversation_id",
        "keel_requests": "conversation_id",
        "checkpoints": "thread_id",
        "checkpoint_writes": "thread_id",
        "checkpoint_blobs": "thread_id",
    }
    with psycopg.connect(database_url) as conn:
        return {
            table: conn.execute(
                f"SELECT count(*) FROM {table} WHERE {column} = %s", (cid,)
            ).fetchone()[0]
            for table, column in tables.items()
        }


@pytest.fixture(scope="module")
def served(postgres_server):
    database_url = new_postgres_database(postgres_server)
    with keel_server(database_url, workers=WORKERS) as server:
        yield server


async def test_after_a_delete_every_worker_answers_404_and_writes_nothing(served):
    url = served.url
    cid = fresh("POST", f"{url}/v1/conversations", json={}).json()["conversation_id"]
    for k in range(3 * WORKERS):  # every worker serves it, and so has read its owner
        said = fresh(
            "POST",
            f"{url}/v1/conversations/{cid}/messages",
            json={"content": f"Add chore {k}"},
            headers={"Idempotency-Key": str(uuid.uuid4())},
        )
        assert said.status_code == 200, said.text
        assert fresh("GET", f"{url}/v1/conversations/{cid}").status_code == 200
    ws = await websockets.connect(f"{url.replace('http', 'ws')}/v1/conversations/{cid}/ws")
    assert json.loads(await ws.recv())["data"]["status"] == "connected"
    before = rows_of(served.database_url, cid)
    assert before["keel_messages"] and before["checkpoints"] and before["keel_requests"]

    assert fresh("DELETE", f"{url}/v1/conversations/{cid}").status_code == 204

    answers = await asyncio.gather(
        *(
            asyncio.to_thread(
                fresh,
                "POST",
                f"{url}/v1/conversations/{cid}/messages",
                json={"content": f"Add late chore {n}"},
            )
            for n in range(POSTS)
        )
    )
    assert [a.status_code for a in answers] == [404] * POSTS
    assert {a.json()["error"]["code"] for a in answers} == {"conversation_not_found"}
    for path in ("", "/messages", "/checkpoints"):
        assert fresh("GET", f"{url}/v1/conversations/{cid}{path}").status_code == 404
    assert fresh("POST", f"{url}/v1/conversations/{cid}/reset").status_code == 404

    await ws.send(json.dumps({"content": "Add a chore through the old socket"}))
    frames = []
    with pytest.raises(websockets.ConnectionClosedError):
        while True:  # until the server closes it
            frames.append(json.loads(await ws.recv()))
    assert frames[-1] == {
        "type": "error",
        "data": {"code": "conversation_not_found", "message": f"conversation {cid} not found"},
    }
    assert ws.close_code == 1008

    listed = fresh("GET", f"{url}/v1/conversations").json()
    assert cid not in {c["conversation_id"] for c in listed}
    assert set(rows_of(served.database_url, cid).values()) == {0}  # all of it, nothing since
    assert fresh("DELETE", f"{url}/v1/conversations/{cid}").status_code == 404
    titles = [t["title"] for t in fresh("GET", f"{url}/v1/tasks").json()]
    assert not [t for t in titles if "late" in t or "old socket" in t]
    assert len(titles) == 3 * WORKERS  # the user's tasks stay
