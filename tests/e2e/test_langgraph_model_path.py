"""keel's graph under `langgraph dev` with a misbehaving provider (the local OpenAI-compatible
stub), driven by the official SDK: Studio's clients get the same honest turns as keel's API."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from langgraph_sdk import get_client

from tests.e2e.test_langgraph_server import langgraph_server
from tests.stub_openai import HANG, StubOpenAI

NOTE = "(The model service failed; keel's offline assistant took over.)"


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[str, StubOpenAI]]:
    workdir = Path(tempfile.mkdtemp(prefix="keel-lg-model-"))
    with StubOpenAI() as stub:
        env = {
            "KEEL_OPENAI_API_KEY": "test-key",
            "KEEL_OPENAI_BASE_URL": stub.base_url,
            "KEEL_MODEL_TIMEOUT_SECONDS": "1",
            "KEEL_MODEL_RETRIES": "1",
            "KEEL_LOOP_LIMIT": "2",
        }
        with langgraph_server(f"sqlite:///{workdir / 'keel.db'}", workdir, **env) as url:
            yield url, stub


async def run(url: str, thread_id: str, text: str) -> tuple[dict, list[dict]]:
    """One run, streamed: its final values and its custom events."""
    client = get_client(url=url)
    values: dict = {}
    events: list[dict] = []
    async for part in client.runs.stream(
        thread_id,
        "keel",
        input={"content": text},
        context={"user_id": "studio-model"},
        stream_mode=["values", "custom"],  # no subgraphs: keel's events reach the default call
    ):
        if part.event == "values":
            values = part.data
        elif part.event == "custom":
            events.append(part.data)
    return values, events


def reasons(events: list[dict], kind: str) -> list[str]:
    return [e["data"]["reason"] for e in events if e["type"] == kind]


def reply(values: dict) -> str:
    texts = [m["content"] for m in values["window"] if m["type"] == "ai"]
    return "\n".join(p for p in (texts[-1], values.get("turn_note")) if p)


async def test_an_unfinished_run_does_not_hold_its_mission_over_the_next(served):
    url, stub = served
    tid = (await get_client(url=url).threads.create())["thread_id"]
    stub.always("Hello! How can I help you today?")
    greeted, events = await run(url, tid, "Hi! How are you today?")  # small talk: no title
    assert not greeted["complete"]  # it said the same again when sent back: the turn ended
    assert greeted["turn_note"] is None  # with nothing undone, no note beside the greeting
    stub.default = None
    stub.reply("A title")  # the first request names the topic
    stub.reply(tool_calls=[{"name": "create_todo_task", "args": {"title": "call the plumber"}}])
    stub.reply("Added.\nKEEL DONE: added")
    added, events = await run(url, tid, "Add call the plumber")
    assert reasons(events, "state_updated") == []  # small talk was no mission: nothing to end
    assert added["mission"] == "Add call the plumber" and added["complete"]


async def test_a_500_after_a_tool_call_and_a_hang_are_finished_offline(served):
    url, stub = served
    stub.default = None
    tid = (await get_client(url=url).threads.create())["thread_id"]
    stub.reply("A title")
    stub.reply(tool_calls=[{"name": "create_todo_task", "args": {"title": "fix the tap"}}])
    stub.server_error()
    stub.server_error()
    fixed, events = await run(url, tid, "Add fix the tap")
    assert reasons(events, "model_fallback") == ["http_500"]
    assert reply(fixed) == f"Created task: fix the tap\n{NOTE}" and fixed["complete"]
    assert [e["data"]["name"] for e in events if e["type"] == "tool_call"] == ["create_todo_task"]

    stub.misbehaving(HANG, times=2)
    oiled, events = await run(url, tid, "Add oil the door")
    assert reasons(events, "model_fallback") == ["timeout"]
    assert reply(oiled) == f"Created task: oil the door\n{NOTE}" and oiled["complete"]
