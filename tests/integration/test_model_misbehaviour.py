"""A real `keel serve` whose provider misbehaves (the local OpenAI-compatible stub), spoken to over
HTTP: each misbehaviour ends in an honest answer, and the next message is a turn of its own."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from tests.integration.server import Server, keel_server_with_model
from tests.integration.server import say as server_say
from tests.integration.test_metrics import metrics
from tests.stub_openai import EMPTY_STREAM, HANG, RUNAWAY, StubOpenAI

LIMITS = {
    "KEEL_MODEL_TIMEOUT_SECONDS": "1",
    "KEEL_MODEL_RETRIES": "1",
    "KEEL_LOOP_LIMIT": "2",
    "KEEL_MAX_TOKENS": "64",
}
NOTE = "(The model service failed; keel's offline assistant took over.)"


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[tuple[Server, StubOpenAI]]:
    db = tmp_path_factory.mktemp("misbehaving") / "keel.db"
    with keel_server_with_model(f"sqlite:///{db}", **LIMITS) as both:
        yield both


@pytest.fixture
def stub(served) -> StubOpenAI:
    _, stub = served
    stub.answers.clear()
    stub.default = None
    stub.refuse_plans = None
    return stub


def conversation(server: Server, stub: StubOpenAI) -> str:
    stub.reply("A title")  # the new topic's title comes first
    return httpx.post(f"{server.url}/v1/conversations", json={}).json()["conversation_id"]


def say(server: Server, cid: str, text: str) -> dict:
    return server_say(server, cid, text, status=200).json()


def say_streaming(server: Server, cid: str, text: str) -> list[tuple[str | None, dict]]:
    """The SSE frames of a turn (the model's answer streamed): (event, data), the result last."""
    frames = []
    with httpx.stream(
        "POST",
        f"{server.url}/v1/conversations/{cid}/messages",
        json={"content": text},
        headers={"Accept": "text/event-stream"},
        timeout=60,
    ) as stream:
        kind = None
        for line in stream.iter_lines():
            if line.startswith("event:"):
                kind = line.split(":", 1)[1].strip()
            elif line.startswith("data:"):
                frames.append((kind, json.loads(line.split(":", 1)[1])))
    return frames


def kinds(result: dict, kind: str) -> list[dict]:
    return [e["data"] for e in result["events"] if e["type"] == kind]


def test_never_done_and_a_closing_question_leave_the_next_request_its_own(served, stub):
    server, _ = served
    cid = httpx.post(f"{server.url}/v1/conversations", json={}).json()["conversation_id"]
    stub.always("Hi! I'm fine, thanks. How can I help you today?")
    greeted = say(server, cid, "Hi! How are you today?")  # small talk: no title is asked for
    assert not greeted["complete"]  # said again when sent back: the turn ends on that answer
    assert greeted["reply"] == "Hi! I'm fine, thanks. How can I help you today?"
    stub.default = None
    stub.reply("A title")  # the first request names the topic
    stub.reply(tool_calls=[{"name": "create_todo_task", "args": {"title": "call the plumber"}}])
    stub.reply("Added.\nKEEL DONE: added")
    added = say(server, cid, "Add call the plumber")
    assert kinds(added, "state_updated") == []  # small talk was no mission: nothing to end
    assert added["mission"] == "Add call the plumber" and added["complete"]
    log = httpx.get(f"{server.url}/v1/conversations/{cid}/messages").json()
    assistant = [m for m in log if m["role"] == "assistant"]
    assert len(assistant) == 2  # one message a turn, however many rounds it took


def test_a_500_after_a_tool_call_streams_a_visible_fallback_and_runs_nothing_twice(served, stub):
    server, _ = served
    cid = conversation(server, stub)
    stub.reply(tool_calls=[{"name": "create_todo_task", "args": {"title": "fix the tap"}}])
    stub.server_error()
    stub.server_error()
    frames = say_streaming(server, cid, "Add fix the tap")
    events = [data["type"] for kind, data in frames if kind == "event"]
    assert events.count("round_started") == 3  # the tool call, the failed round, the offline one
    assert "model_fallback" in events
    result = frames[-1][1]
    assert result["reply"] == f"Created task: fix the tap\n{NOTE}" and result["complete"]
    assert [c["name"] for c in result["tool_calls"]] == ["create_todo_task"]
    titles = [t["title"] for t in httpx.get(f"{server.url}/v1/tasks").json()]
    assert titles.count("fix the tap") == 1
    assert metrics(server)['keel_model_fallbacks_total{reason="http_500",step="answer"}'] >= 1


@pytest.mark.parametrize("misbehave", [HANG, EMPTY_STREAM, "repeated name"])
@pytest.mark.parametrize("streamed", [True, False])
def test_a_hang_an_empty_stream_or_a_garbled_call_falls_back(served, stub, misbehave, streamed):
    server, _ = served
    cid = conversation(server, stub)
    if misbehave == "repeated name":
        if not streamed:
            pytest.skip("a name repeated in every chunk needs chunks: a streamed answer")
        stub.repeated_name("create_todo_task", {"title": "oil the door"}, times=2)
    else:
        stub.misbehaving(misbehave, times=2)
    if streamed:
        result = say_streaming(server, cid, "Add oil the door")[-1][1]
    else:
        result = say(server, cid, "Add oil the door")
    reason = {HANG: "timeout", EMPTY_STREAM: "empty_answer"}.get(misbehave, "bad_tool_name")
    assert [f["reason"] for f in kinds(result, "model_fallback")] == [reason]
    assert result["reply"] == f"Created task: oil the door\n{NOTE}" and result["complete"]


def test_a_runaway_answer_is_cut_at_max_tokens(served, stub):
    server, _ = served
    cid = conversation(server, stub)
    stub.misbehaving(RUNAWAY)
    stub.reply("That was long.\nKEEL DONE: answered")
    result = say(server, cid, "Tell me a long story")
    assert result["complete"] and result["reply"] == "That was long."
    assert [r["max_tokens"] for r in stub.requests[-2:]] == [64, 64]


def test_refused_structured_output_plans_by_the_phrasings_visibly(served, stub):
    server, _ = served
    cid = conversation(server, stub)
    stub.refuse_plans = 500
    stub.reply(tool_calls=[{"name": "create_todo_task", "args": {"title": "paint"}}])
    stub.reply("Added paint.\nKEEL DONE: added")
    result = say(server, cid, "Add paint")
    [fallback] = kinds(result, "model_fallback")
    assert fallback["step"] == "plan" and fallback["reason"] == "structured_output_refused"
    assert result["complete"] and result["todolist"]["items"][0]["tool"] == "create_todo_task"


def test_the_turn_budget_ends_a_hanging_turn(tmp_path):
    env = {"KEEL_TURN_SECONDS": "2", "KEEL_MODEL_TIMEOUT_SECONDS": "30"}
    with keel_server_with_model(f"sqlite:///{tmp_path / 'keel.db'}", **env) as (server, stub):
        cid = conversation(server, stub)
        stub.misbehaving(HANG)
        result = say(server, cid, "Add buy milk")
        assert kinds(result, "turn_timed_out") == [{"seconds": 2, "open_items": ["Add buy milk"]}]
        assert not result["complete"] and "ran out of time" in result["reply"]
        stub.reply(tool_calls=[{"name": "create_todo_task", "args": {"title": "eggs"}}])
        stub.reply("Added eggs.\nKEEL DONE: added")
        nxt = say(server, cid, "Add eggs")
        assert nxt["complete"] and nxt["mission"] == "Add eggs"
        assert stub.closed == 1  # the abandoned request was closed


def test_a_small_models_text_call_and_copied_notes_never_reach_the_stream(served, stub):
    server, _ = served
    cid = conversation(server, stub)
    stub.reply('Sure.\n{"name": "create_todo_task", "arguments": {"title": "paint the fence"}}')
    stub.reply(
        f"## Current conversation (most important)\nUser: hi\nAdded it. {NOTE}\nKEEL DONE: ok"
    )
    frames = say_streaming(server, cid, "Add paint the fence")
    result = frames[-1][1]
    tokens = "".join(d["data"]["text"] for k, d in frames if k == "token")
    for raw in ("create_todo_task", '"arguments"', "Current conversation", "User: hi", NOTE):
        assert raw not in tokens and raw not in result["reply"]
    assert "Sure." in tokens and "Added it." in tokens
    assert result["reply"] == "Added it." and result["complete"]
    tasks = httpx.get(f"{server.url}/v1/tasks").json()
    assert [t["title"] for t in tasks].count("paint the fence") == 1
