"""Reminders against a real `keel serve`: set in words, said once in their conversation, and told
over the API (``GET /v1/reminders``, its SSE stream, the conversation's WebSocket); on SQLite and
PostgreSQL, with two workers, and after a crash before the time came.
"""

import asyncio
import json
import os
import signal
import time

import httpx
import pytest
import websockets
from httpx_sse import aconnect_sse

from tests.conftest import new_postgres_database
from tests.integration.conftest import ANN, BOB, KEYS
from tests.integration.server import keel_server
from tests.integration.test_api import new_conversation, say

REMINDER = "⏰ Reminder: check the laundry (task {n})."


def reminders(server, headers=ANN, **params) -> list[dict]:
    answer = httpx.get(f"{server.url}/v1/reminders", headers=headers, params=params, timeout=30)
    assert answer.status_code == 200, answer.text
    return answer.json()


def delivered(server, count: int, headers=ANN, seconds: float = 60) -> list[dict]:
    """The caller's reminders once ``count`` of them are said (fails after ``seconds``)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = [r for r in reminders(server, headers) if r["delivered_at"]]
        if len(found) >= count:
            return found
        time.sleep(0.25)
    raise AssertionError(f"{count} reminders not said in {seconds} s: {reminders(server, headers)}")


def logged(server, cid, headers=ANN) -> list[str]:
    answer = httpx.get(f"{server.url}/v1/conversations/{cid}/messages", headers=headers, timeout=30)
    assert answer.status_code == 200, answer.text
    return [m["content"] for m in answer.json()]


def set_reminder(server, cid, seconds: int = 2, title: str = "check the laundry") -> dict:
    answer = say(server, cid, f"remind me in {seconds} seconds to {title}").json()
    [call] = answer["tool_calls"]
    assert call["name"] == "create_todo_task" and call["result"]["title"] == title, answer
    return call["result"]


async def _told(server, cid) -> tuple[dict, dict]:
    """The first reminder frame of the conversation's WebSocket and of the SSE stream."""
    ws_url = server.url.replace("http", "ws") + f"/v1/conversations/{cid}/ws?token=ann-key"
    async with websockets.connect(ws_url) as ws, httpx.AsyncClient(timeout=60) as client:
        assert json.loads(await ws.recv())["type"] == "status"
        async with aconnect_sse(
            client,
            "GET",
            f"{server.url}/v1/reminders/events",
            headers={**ANN},  # it adds to it
        ) as stream:
            await asyncio.to_thread(set_reminder, server, cid)
            frame = await asyncio.wait_for(anext(aiter(stream.aiter_sse())), 30)
            assert frame.event == "reminder" and frame.id
            while (sent := json.loads(await asyncio.wait_for(ws.recv(), 30)))["type"] != "reminder":
                pass
            return json.loads(frame.data), sent["data"]


def test_a_reminder_set_in_words_is_said_once_in_its_conversation_and_told(server_url):
    cid = new_conversation(server_url)
    before = len(delivered(server_url, 0))
    streamed, pushed = asyncio.run(_told(server_url, cid))
    [said, *_] = delivered(server_url, before + 1)
    assert streamed == pushed == said
    assert said["conversation_id"] == cid and said["title"] == "check the laundry"
    text = REMINDER.format(n=said["task_id"])
    assert logged(server_url, cid)[-1] == text
    time.sleep(2.5)  # more polls: it is still said once
    assert logged(server_url, cid).count(text) == 1
    assert [r for r in reminders(server_url, BOB) if r["id"] == said["id"]] == []
    # Done in words after it; reminded of nothing more.
    done = say(server_url, cid, f"complete task {said['task_id']}").json()
    assert done["tool_calls"][0]["name"] == "complete_todo_task"


def test_a_task_done_before_its_time_is_not_reminded(server_url):
    cid = new_conversation(server_url)
    task = set_reminder(server_url, cid, seconds=3, title="feed the cat")
    say(server_url, cid, f"complete task {task['id']}")
    time.sleep(4.5)
    assert not any(r["task_id"] == task["id"] for r in reminders(server_url))
    assert not any("feed the cat (task" in m for m in logged(server_url, cid))


def test_since_needs_a_zone_and_reads_what_was_said_after_it(server_url):
    answer = httpx.get(
        f"{server_url.url}/v1/reminders", headers=ANN, params={"since": "2026-01-01T00:00"}
    )
    assert answer.status_code == 422
    assert reminders(server_url, since="2999-01-01T00:00:00Z") == []


@pytest.fixture
def postgres_url(postgres_server) -> str:
    return new_postgres_database(postgres_server)


def test_two_workers_say_each_reminder_once(postgres_url):
    with keel_server(postgres_url, workers=2, KEEL_API_KEYS=KEYS) as server:
        cids = [new_conversation(server) for _ in range(6)]
        for n, cid in enumerate(cids):
            set_reminder(server, cid, seconds=3, title=f"check the laundry {n}")
        said = delivered(server, len(cids))
        assert sorted(r["conversation_id"] for r in said) == sorted(cids)
        time.sleep(2)
        for n, cid in enumerate(cids):
            lines = [m for m in logged(server, cid) if m.startswith("⏰ Reminder")]
            assert len(lines) == 1 and f"check the laundry {n}" in lines[0]


def test_a_reminder_due_while_keel_was_down_is_said_once_it_is_back(postgres_url):
    with keel_server(postgres_url, KEEL_API_KEYS=KEYS) as server:
        cid = new_conversation(server)
        task = set_reminder(server, cid, seconds=2)
        os.kill(server.process.pid, signal.SIGKILL)
        server.process.wait()
    time.sleep(3)  # its time passes while no keel runs
    with keel_server(postgres_url, KEEL_API_KEYS=KEYS) as server:
        [said] = delivered(server, 1)
        assert said["task_id"] == task["id"] and said["conversation_id"] == cid
        time.sleep(2)
        assert logged(server, cid).count(REMINDER.format(n=task["id"])) == 1
