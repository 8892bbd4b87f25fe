"""GET /v1/tasks a page at a time, and a bounded list turn, against a real `keel serve`.

Tasks are made by opening the server's own database (SQLite or PostgreSQL) in the test.
"""

import asyncio
import json
import re

import httpx
import pytest
import websockets

from keel.tools.tasks.store import TaskStore
from tests.helpers import open_database
from tests.integration.conftest import ANN, BOB
from tests.integration.test_api import new_conversation, say

COUNT = 730
BOUND = 10_000


def title(n: int) -> str:
    return f"paged chore {n}"


async def create_tasks(database_url: str) -> None:
    async with open_database(database_url) as db:
        async with db.transaction() as tx:
            store = TaskStore(db).within(tx)
            for n in range(1, COUNT + 1):
                await store.create("ann", title(n))


@pytest.fixture(scope="module")
def filled(server_url):
    """ann's ``COUNT`` tasks (ids 1 to COUNT), made straight in the server's database."""
    asyncio.run(create_tasks(server_url.database_url))


def tasks(server, headers=ANN, **params):
    answer = httpx.get(f"{server.url}/v1/tasks", params=params, headers=headers)
    return answer


def test_get_tasks_pages_with_a_total(server_url, filled):
    everything = tasks(server_url)  # the chat page's call: no parameters
    assert everything.status_code == 200, everything.text
    total = int(everything.headers["X-Total-Count"])
    assert total == COUNT
    first = everything.json()
    assert isinstance(first, list) and len(first) == 500
    assert [t["id"] for t in first] == list(range(1, 501))
    assert first[0]["title"] == title(1)
    keys = {"id", "title", "completed", "created_at", "due", "overdue", "list", "repeat"}
    assert set(first[0]) == keys
    assert re.fullmatch(
        r'<.*/v1/tasks\?offset=500&limit=500>; rel="next"', everything.headers["Link"]
    )
    rest = tasks(server_url, offset=500)
    assert rest.headers["X-Total-Count"] == str(total)
    assert len(rest.json()) == total - 500 and "Link" not in rest.headers
    assert [t["id"] for t in rest.json()] == list(range(501, COUNT + 1))
    page = tasks(server_url, offset=10, limit=5)
    assert [t["id"] for t in page.json()] == list(range(11, 16))
    link = re.fullmatch(r'<(/v1/tasks\?offset=15&limit=5)>; rel="next"', page.headers["Link"])
    following = httpx.get(server_url.url + link[1], headers=ANN)
    assert [t["id"] for t in following.json()] == list(range(16, 21))
    past = tasks(server_url, offset=total + 5, limit=3)
    assert past.status_code == 200 and past.json() == []
    assert past.headers["X-Total-Count"] == str(total)


def test_another_user_counts_only_their_own(server_url, filled):
    answer = tasks(server_url, headers=BOB)
    assert answer.status_code == 200
    assert answer.headers["X-Total-Count"] == "0" and answer.json() == []


@pytest.mark.parametrize(
    "params",
    [{"limit": 0}, {"limit": 501}, {"offset": -1}, {"limit": "many"}, {"offset": 2**64}],
)
def test_a_bad_page_is_422(server_url, params):
    answer = tasks(server_url, **params)
    assert answer.status_code == 422 and answer.json()["error"]["code"] == "invalid_request"


def test_the_page_parameters_are_in_the_schema(server_url):
    operation = httpx.get(f"{server_url.url}/openapi.json").json()["paths"]["/v1/tasks"]["get"]
    params = {p["name"]: p["schema"] for p in operation["parameters"]}
    assert params["limit"]["maximum"] == 500 and params["limit"]["default"] == 500
    assert params["offset"]["minimum"] == 0
    assert "X-Total-Count" in operation["responses"]["200"]["headers"]


async def test_a_list_turn_over_the_websocket_is_bounded(server_url, filled):
    cid = httpx.post(f"{server_url.url}/v1/conversations", json={}, headers=ANN).json()
    cid = cid["conversation_id"]
    ws_url = server_url.url.replace("http", "ws") + f"/v1/conversations/{cid}/ws"
    async with websockets.connect(ws_url, additional_headers=ANN) as ws:
        await ws.recv()  # connected
        replies = []
        for text in ("What's on my list?", "show more tasks"):
            await ws.send(json.dumps({"content": text}))
            while True:
                frame = await ws.recv()
                assert len(frame.encode()) < 3 * BOUND  # far below the 1 MiB clients refuse
                if json.loads(frame)["type"] == "chat":
                    replies.append(json.loads(frame)["data"]["reply"])
                    break
    total = COUNT
    assert replies[0].splitlines()[-1] == (
        f'(showing 1-50 of {total:,}; say "show more tasks" for the next ones)'
    )
    assert replies[1].splitlines()[-1] == (
        f'(showing 51-100 of {total:,}; say "show more tasks" for the next ones)'
    )
    log = httpx.get(f"{server_url.url}/v1/conversations/{cid}/messages", headers=ANN).json()
    results = [m["content"] for m in log if m["role"] == "tool"]
    assert len(results) == 2 and all(len(r.encode()) < BOUND for r in results)


def test_delete_by_title_beyond_the_first_page(server_url, filled):
    cid = new_conversation(server_url)

    def said(content):
        answer = say(server_url, cid, content)
        assert answer.status_code == 200, answer.text
        return answer.json()

    asked = said(f"Delete {title(700)}")
    assert asked["awaiting_confirmation"]["task_id"] == 700
    assert said("yes")["reply"] == f"Deleted task 700: {title(700)}"
    assert httpx.get(f"{server_url.url}/v1/tasks/700", headers=ANN).status_code == 404
    assert tasks(server_url).headers["X-Total-Count"] == str(COUNT - 1)
