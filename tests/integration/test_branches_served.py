"""A conversation forked from an earlier checkpoint, served: its log shows the active branch.

The fork is made the way Studio or a notebook makes one, through the graph on the database the
server uses; the server then answers for the branch (SQLite and PostgreSQL).
"""

import httpx

from keel.checkpoints.backend import open_backend
from keel.graphs.builder import build_graph
from keel.graphs.resources import open_resources
from keel.graphs.runner import thread_config
from keel.tools.tasks.todo import TODO_TOOLS
from tests.integration.conftest import ANN, BOB
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


def log(server, cid, **query):
    answer = httpx.get(f"{server.url}/v1/conversations/{cid}/messages", params=query, headers=ANN)
    assert answer.status_code == 200, answer.text
    return [m for m in answer.json() if m["role"] == "user"]


def send(server, cid, content, checkpoint_id=None, headers=ANN):
    body = {"content": content, "checkpoint_id": checkpoint_id}
    return httpx.post(
        f"{server.url}/v1/conversations/{cid}/messages", json=body, headers=headers, timeout=30
    )


def branches(server, cid, message_id, **query):
    url = f"{server.url}/v1/conversations/{cid}/messages/{message_id}/branches"
    answer = httpx.get(url, params=query, headers=ANN)
    assert answer.status_code == 200, answer.text
    return answer.json()


def task_titles(server):
    answer = httpx.get(f"{server.url}/v1/tasks", headers=ANN)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    return [t["title"] for t in (body["tasks"] if isinstance(body, dict) else body)]


def test_an_edited_message_starts_a_branch_and_the_earlier_one_stays_reachable(server_url):
    cid = new_conversation(server_url)
    for text in ("Add apples", "Add pears", "Add figs"):
        say(server_url, cid, text)
    first, pears, _ = log(server_url, cid)
    assert pears["checkpoint_id"] and (pears["branch_count"], pears["branch_index"]) == (1, 1)
    assert first["checkpoint_id"] == "beginning"  # before the conversation's first checkpoint

    edited = send(server_url, cid, "Add plums", pears["checkpoint_id"])
    assert edited.status_code == 200, edited.text
    assert edited.json()["reply"] == "Created task: plums"
    shown = log(server_url, cid)
    assert [m["content"] for m in shown] == ["Add apples", "Add plums"]
    assert (shown[1]["branch_count"], shown[1]["branch_index"]) == (2, 2)
    assert shown[1]["checkpoint_id"] == pears["checkpoint_id"]

    both = branches(server_url, cid, shown[1]["id"])
    assert [(b["content"], b["viewed"]) for b in both] == [
        ("Add pears", False),
        ("Add plums", True),
    ]
    assert all(b["checkpoint_id"] for b in both)

    # the earlier branch, viewed where it ended, and continued from there
    earlier = both[0]["checkpoint_id"]
    assert users(server_url, cid, checkpoint_id=earlier) == ["Add apples", "Add pears", "Add figs"]
    assert [b["viewed"] for b in branches(server_url, cid, pears["id"], checkpoint_id=earlier)] == [
        True,
        False,
    ]
    state = httpx.get(
        f"{server_url.url}/v1/conversations/{cid}", params={"checkpoint_id": earlier}, headers=ANN
    )
    assert state.status_code == 200 and state.json()["stats"]["turns"] == 3, state.text
    assert send(server_url, cid, "Add kiwis", earlier).json()["reply"] == "Created task: kiwis"
    assert users(server_url, cid) == ["Add apples", "Add pears", "Add figs", "Add kiwis"]
    # tasks the tools made on either branch stay: only the conversation went back
    assert {"apples", "pears", "figs", "plums", "kiwis"} <= set(task_titles(server_url))


def test_the_first_message_can_be_edited_too(server_url):
    cid = new_conversation(server_url)
    say(server_url, cid, "Add apples")
    say(server_url, cid, "Add pears")
    first = log(server_url, cid)[0]
    assert send(server_url, cid, "Add lemons", first["checkpoint_id"]).status_code == 200
    shown = log(server_url, cid)
    assert [m["content"] for m in shown] == ["Add lemons"]
    assert (shown[0]["branch_count"], shown[0]["branch_index"]) == (2, 2)
    earlier = branches(server_url, cid, shown[0]["id"])[0]
    assert earlier["content"] == "Add apples" and not earlier["viewed"]
    assert users(server_url, cid, checkpoint_id=earlier["checkpoint_id"]) == [
        "Add apples",
        "Add pears",
    ]


def test_a_checkpoint_not_kept_is_a_clear_error_and_changes_nothing(server_url):
    cid = new_conversation(server_url)
    say(server_url, cid, "Add apples")
    gone = "1f0000000-dead-beef-0000-000000000000"
    answer = send(server_url, cid, "Add pears", gone)
    assert answer.status_code == 404, answer.text
    assert answer.json()["error"]["code"] == "checkpoint_not_found"
    read = httpx.get(
        f"{server_url.url}/v1/conversations/{cid}/messages",
        params={"checkpoint_id": gone},
        headers=ANN,
    )
    assert read.status_code == 404 and read.json()["error"]["code"] == "checkpoint_not_found"
    assert users(server_url, cid) == ["Add apples"]
    assert say(server_url, cid, "Add pears").json()["reply"] == "Created task: pears"


def test_another_users_checkpoint_or_message_is_not_reachable(server_url):
    cid = new_conversation(server_url)
    say(server_url, cid, "Add apples")
    say(server_url, cid, "Add pears")
    mine = log(server_url, cid)[1]
    theirs = new_conversation(server_url, headers=BOB)
    say(server_url, theirs, "Add figs", headers=BOB)
    answer = send(server_url, theirs, "Add kiwis", mine["checkpoint_id"], headers=BOB)
    assert answer.status_code == 404 and answer.json()["error"]["code"] == "checkpoint_not_found"
    answer = send(server_url, cid, "Add kiwis", mine["checkpoint_id"], headers=BOB)
    assert answer.status_code == 404 and answer.json()["error"]["code"] == "conversation_not_found"
    url = f"{server_url.url}/v1/conversations/{cid}/messages/{mine['id']}/branches"
    assert httpx.get(url, headers=BOB).status_code == 404
    ours = f"{server_url.url}/v1/conversations/{theirs}/messages/{mine['id']}/branches"
    assert httpx.get(ours, headers=BOB).status_code == 404


def test_what_names_no_kept_checkpoint_or_no_turns_message_is_refused(server_url):
    cid = new_conversation(server_url)
    say(server_url, cid, "Add apples")
    answer = send(server_url, cid, "Add pears", "")
    assert answer.status_code == 422 and answer.json()["error"]["code"] == "invalid_request"
    for path in ("messages", ""):  # the beginning can be run from, not viewed
        url = f"{server_url.url}/v1/conversations/{cid}/{path}".rstrip("/")
        read = httpx.get(url, params={"checkpoint_id": "beginning"}, headers=ANN)
        assert read.status_code == 404 and read.json()["error"]["code"] == "checkpoint_not_found"
    reply = [m for m in messages_of(server_url, cid) if m["role"] == "assistant"][0]
    assert reply["checkpoint_id"] is None
    url = f"{server_url.url}/v1/conversations/{cid}/messages/{reply['id']}/branches"
    answer = httpx.get(url, headers=ANN)
    assert answer.status_code == 404 and answer.json()["error"]["code"] == "message_not_found"
    assert users(server_url, cid) == ["Add apples"]


def messages_of(server, cid):
    answer = httpx.get(f"{server.url}/v1/conversations/{cid}/messages", headers=ANN)
    assert answer.status_code == 200, answer.text
    return answer.json()
