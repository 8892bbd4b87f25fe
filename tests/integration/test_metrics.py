"""/metrics against a real `keel serve`: what a session did, counted, behind the API keys, and
summed over every worker of a server."""

import asyncio
import re

import httpx

from tests.conftest import new_postgres_database
from tests.integration.conftest import ANN, KEYS
from tests.integration.server import keel_server, keel_server_with_model
from tests.integration.test_api import new_conversation, say

SESSION = [
    "Add buy milk",
    "Add walk the dog",
    "Delete task 1",
    "yes",
    "Delete task 2",
    "no",
    "Let's discuss the garden",
    "What's on my list?",
]


def metrics(server, headers=ANN) -> dict[str, float]:
    answer = httpx.get(f"{server.url}/metrics", headers=headers)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain")
    found = {}
    for line in answer.text.splitlines():
        if match := re.fullmatch(r"(keel_\w+(?:\{[^}]*\})?) (\S+)", line):
            found[match.group(1)] = found.get(match.group(1), 0.0) + float(match.group(2))
    return found


def talk(server, lines):
    cid = new_conversation(server)
    for line in lines:
        answer = say(server, cid, line)
        assert answer.status_code == 200, answer.text
    return cid


def test_a_session_is_counted_and_only_a_key_reads_it(tmp_path):
    with keel_server(f"sqlite:///{tmp_path / 'keel.db'}", KEEL_API_KEYS=KEYS) as server:
        assert httpx.get(f"{server.url}/metrics").status_code == 401
        cid = talk(server, SESSION)
        httpx.post(f"{server.url}/v1/conversations/{cid}/reset", headers=ANN)
        seen = metrics(server)
    assert seen['keel_turns_total{outcome="awaiting_confirmation"}'] == 2
    turns = sum(v for k, v in seen.items() if k.startswith("keel_turns_total{"))
    assert turns == len(SESSION)
    assert seen['keel_tool_calls_total{outcome="ok",tool="create_todo_task"}'] == 2
    assert seen['keel_tool_calls_total{outcome="confirmed",tool="delete_todo_task"}'] == 1
    assert seen['keel_tool_calls_total{outcome="cancelled",tool="delete_todo_task"}'] == 1
    assert seen['keel_confirmations_total{step="asked"}'] == 2
    assert seen['keel_confirmations_total{step="confirmed"}'] == 1
    assert seen['keel_confirmations_total{step="cancelled"}'] == 1
    assert seen['keel_topic_changes_total{reason="phrase"}'] == 1
    assert seen['keel_topic_changes_total{reason="user_reset"}'] == 1
    assert seen['keel_mission_resets_total{reason="user_requested"}'] == 1
    assert seen['keel_mission_resets_total{reason="completed_todolist_detected"}'] >= 1
    assert seen["keel_turn_seconds_count" + '{outcome="complete"}'] >= 1


def test_every_worker_answers_for_all_of_them(postgres_server):
    url = new_postgres_database(postgres_server)
    with keel_server(url, workers=2, KEEL_API_KEYS=KEYS) as server:
        talk(server, ["Add buy milk"] * 6)
        counts = {
            sum(v for k, v in metrics(server).items() if k.startswith("keel_turns_total{"))
            for _ in range(6)
        }
        pool = metrics(server)
    assert counts == {6}
    assert pool['keel_db_pool{measure="connections"}'] >= 2


async def test_a_refusal_is_counted_by_status_and_code(tmp_path):
    with keel_server_with_model(f"sqlite:///{tmp_path / 'keel.db'}") as (server, stub):
        stub.reply("Chores")  # the topic's title
        stub.reply("Thinking it over.\nKEEL DONE: answered")
        stub.delays[1] = 3.0  # the model is slow to answer
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as client:
            cid = (await client.post("/v1/conversations", json={})).json()["conversation_id"]
            url = f"/v1/conversations/{cid}/messages"
            first = asyncio.create_task(client.post(url, json={"content": "Two chores"}))
            async with asyncio.timeout(30):
                while len(stub.requests) < 2:
                    await asyncio.sleep(0.05)
            second = await client.post(url, json={"content": "Hello again"})
            assert second.status_code == 409
            assert (await first).status_code == 200
        seen = metrics(server, {})
    assert seen['keel_requests_refused_total{code="conversation_busy",status="409"}'] == 1
    assert seen['keel_turns_total{outcome="complete"}'] == 1
