"""A conversation forked from an earlier checkpoint, served: its log shows the active branch.

The fork is made the way Studio or a notebook makes one, through the graph on the database the
server uses; the server then answers for the branch (SQLite and PostgreSQL).
"""

import httpx

from keel.checkpoints.backend import open_backend
from keel.graphs.builder import build_graph
from keel.graphs.resources import open_resources
from keel.graphs.runner import thread_config
from keel.tools.todo import TODO_TOOLS
from tests.integration.conftest import ANN
from tests.integration.test_api import new_conversation, say


def users(server, cid, **query):
    answer = httpx.get(f"{server.url}/v1/conversations/{cid}/messages", params=query, headers=ANN)
    assert answer.status_code == 200, answer.text
    return [m["content"] for m in answer.json() if m["role"] == "user"]


async def fork_after_turn(server, cid, turn, content):
    async with open_backend(server.database_url) as backend:
        graph = build_graph(checkpointer=backend.saver)
        context = open_resources(backend.db, backend.saver, tools=TODO_TOOLS).context("ann")
        history = [s async for s in graph.aget_state_history(thread_config(cid))]
        start = next(s for s in history if not s.next and s.values["stats"]["turns"] == turn)
        await graph.ainvoke({"content": content}, start.config, context=context)


async def test_the_log_shows_the_branch_the_conversation_is_on(server_url):
    cid = new_conversation(server_url)
    for text in ("Add apples", "Add pears", "Add figs"):
        say(server_url, cid, text)
    assert users(server_url, cid) == ["Add apples", "Add pears", "Add figs"]

    await fork_after_turn(server_url, cid, 1, "Add plums")
    assert users(server_url, cid) == ["Add apples", "Add plums"]
    assert users(server_url, cid, order="newest", limit=4) == ["Add plums"]

    answer = say(server_url, cid, "Add kiwis").json()
    assert answer["reply"] == "Created task: kiwis"
    assert users(server_url, cid) == ["Add apples", "Add plums", "Add kiwis"]
    assert users(server_url, cid, topic="active") == ["Add apples", "Add plums", "Add kiwis"]
