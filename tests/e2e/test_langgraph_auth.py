"""keel's graph under a LangGraph server with keel's API keys (langgraph.auth.json).

The acting user is the key's user, never the run's context; a thread that is another user's keel
conversation is refused by the graph itself; each user sees only their own threads.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import httpx
import pytest
from langgraph_sdk import get_client

from tests.e2e.test_langgraph_server import ROOT, langgraph_server
from tests.integration.server import keel_server

KEYS = "ann:ann-key,bob:bob-key"


def client(url: str, key: str):
    return get_client(url=url, headers={"Authorization": f"Bearer {key}"})


def last_text(values: dict) -> str:
    return [m["content"] for m in values["window"] if isinstance(m["content"], str)][-1]


async def test_the_key_decides_who_acts_and_whose_conversations_can_be_run():
    workdir = Path(tempfile.mkdtemp(prefix="keel-lg-auth-"))
    database = f"sqlite:///{workdir / 'keel.db'}"
    with keel_server(database, KEEL_API_KEYS=KEYS) as keel:
        ann = {"Authorization": "Bearer ann-key"}
        anns = httpx.post(f"{keel.url}/v1/conversations", json={}, headers=ann).json()
        cid = anns["conversation_id"]
        said = httpx.post(
            f"{keel.url}/v1/conversations/{cid}/messages",
            json={"content": "Add file the taxes"},
            headers=ann,
        )
        assert said.json()["reply"] == "Created task: file the taxes"
    # the server reads the auth module's path from the folder it runs in: the checkout
    auth = "langgraph.auth.json"
    with langgraph_server(database, workdir, auth, cwd=ROOT, KEEL_API_KEYS=KEYS) as url:
        assert httpx.get(f"{url}/threads/{cid}").status_code in (401, 403)
        bob = client(url, "bob-key")
        thread = (await bob.threads.create())["thread_id"]
        pretending = {"user_id": "ann"}  # the context names ann: the key says bob
        mine = await bob.runs.wait(
            thread, "keel", input={"content": "Show all"}, context=pretending
        )
        assert last_text(mine) == "Your list is empty."
        await bob.threads.create(thread_id=cid, if_exists="do_nothing")
        with pytest.raises(Exception, match="ConversationNotFound"):
            await bob.runs.wait(
                cid, "keel", input={"content": "Delete task 1, yes"}, raise_error=True
            )
        ann_client = client(url, "ann-key")
        assert thread not in [t["thread_id"] for t in await ann_client.threads.search()]
        bob_by_header = get_client(url=url, api_key="bob-key")  # x-api-key, as Agent Chat UI
        assert thread in [t["thread_id"] for t in await bob_by_header.threads.search()]
        unknown = httpx.get(f"{url}/threads/{thread}", headers={"x-api-key": "eve-key"})
        assert unknown.status_code == 401
    with keel_server(database, KEEL_API_KEYS=KEYS) as keel:
        tasks = httpx.get(f"{keel.url}/v1/tasks", headers=ann).json()
        assert [t["title"] for t in tasks] == ["file the taxes"]
        log = httpx.get(f"{keel.url}/v1/conversations/{cid}/messages", headers=ann).json()
        assert [m["content"] for m in log if m["role"] == "user"] == ["Add file the taxes"]
