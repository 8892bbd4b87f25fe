"""A provider that does not follow keel's script, against the local OpenAI-compatible stub: each
misbehaviour ends in an honest turn, and the next message is a turn of its own."""

import asyncio
import time
import uuid

import pytest
import structlog

from keel.graphs.run_turn import run_turn
from keel.nodes.models.chat import ModelLimits, build_agent_model, build_title_model
from keel.nodes.models.model_call import seconds_left
from keel.nodes.models.takeover import FALLBACK_NOTE
from keel.tools.ask_user import ask_user
from keel.tools.next_step import record_next_step
from keel.tools.tasks.todo import TODO_TOOLS
from tests.stub_openai import EMPTY_STREAM, HANG, RUNAWAY, StubOpenAI

TOOLS = [*TODO_TOOLS, record_next_step, ask_user]


def stub_model(stub, **limits):
    return build_agent_model(
        TOOLS, api_key="test", model="stub", base_url=stub.base_url, limits=ModelLimits(**limits)
    )


async def stubbed(keel, cid, text, stub, limits=None, **ctx):
    """A turn on the model behind ``stub`` (``limits``: the model's own settings)."""
    return await keel.say(cid, text, model=stub_model(stub, **(limits or {})), **ctx)


def kinds(result, kind):
    return [e["data"] for e in result.events if e["type"] == kind]


async def titles(keel):
    return [t["title"] for t in await keel.store.list("local")]


async def test_a_model_that_never_says_done_ends_its_turn_and_the_next_starts_afresh(memory_keel):
    cid = str(uuid.uuid4())
    await memory_keel.store.create("local", "old task")
    with StubOpenAI() as stub:
        stub.always("I have added it for you.")  # it has not, and says so again when sent back
        first = await stubbed(memory_keel, cid, "Add buy milk", stub, loop_limit=3)
        assert not first.complete and first.reply.endswith("gave the same answer again.")
        stub.default = None
        stub.reply(tool_calls=[{"name": "delete_todo_task", "args": {"task_id": 1}}])
        second = await stubbed(memory_keel, cid, "Delete task 1", stub)
    assert [r["reason"] for r in kinds(second, "state_updated")] == ["unfinished_turn_abandoned"]
    assert second.mission == "Delete task 1"
    assert second.awaiting_confirmation is not None  # a delete step of its own, asked first
    assert [i["tool"] for i in second.todolist["items"]] == ["delete_todo_task"]


async def test_a_reply_ending_in_a_question_does_not_swallow_the_next_request(memory_keel):
    cid = str(uuid.uuid4())
    with StubOpenAI() as stub:
        stub.always("Hi! I am fine. How can I help you today?")
        greeted = await stubbed(memory_keel, cid, "Hi! How are you today?", stub, loop_limit=1)
        stub.default = None
        stub.reply(tool_calls=[{"name": "create_todo_task", "args": {"title": "call the plumber"}}])
        stub.reply("Added call the plumber.\nKEEL DONE: added")
        added = await stubbed(memory_keel, cid, "Add call the plumber", stub)
    assert not greeted.complete
    assert added.mission == "Add call the plumber" and added.complete
    assert await titles(memory_keel) == ["call the plumber"]


async def test_a_question_asked_with_ask_user_waits_for_its_answer(memory_keel):
    cid = str(uuid.uuid4())
    with StubOpenAI() as stub:
        stub.reply(tool_calls=[{"name": "ask_user", "args": {"question": "Which title?"}}])
        asked = await stubbed(memory_keel, cid, "Add a task", stub)
        stub.reply(tool_calls=[{"name": "create_todo_task", "args": {"title": "milk"}}])
        stub.reply("Added milk.\nKEEL DONE: added")
        answered = await stubbed(memory_keel, cid, "milk", stub)
        sent = stub.requests[-1]["messages"]
    assert asked.reply == "Which title?" and not asked.complete
    assert answered.mission == "Add a task" and answered.complete
    assert any("Which title? -> milk" in str(m["content"]) for m in sent)


@pytest.mark.parametrize(
    ("text", "call", "expected"),
    [
        ("Add call the plumber", ("create_todo_task", {"title": "call the plumber"}), None),
        ("What's on my list?", ("list_todo_tasks", {}), "Your tasks:"),
    ],
)
async def test_a_500_after_a_tool_call_is_finished_offline_without_running_it_again(
    memory_keel, text, call, expected
):
    await memory_keel.store.create("local", "water the plants")
    with StubOpenAI() as stub:
        stub.reply(tool_calls=[{"name": call[0], "args": call[1]}])
        stub.server_error()
        stub.server_error()  # and the one retry
        with structlog.testing.capture_logs() as logs:
            result = await stubbed(memory_keel, str(uuid.uuid4()), text, stub)
        assert len(stub.requests) == 3  # the tool call, the failure and its retry: no more
    assert [c["name"] for c in result.tool_calls] == [call[0]]  # it ran once
    assert result.complete and result.reply.endswith(FALLBACK_NOTE)
    said = result.reply.removesuffix(FALLBACK_NOTE)
    assert said.count("Your") + said.count("Created") == 1  # what ran, said once
    assert "empty" not in said and "Error" not in said
    if expected:
        assert said.startswith(expected)
    [fallback] = kinds(result, "model_fallback")
    assert fallback["reason"] == "http_500" and fallback["status"] == 500
    [line] = [e for e in logs if e["event"] == "model_fallback"]
    assert line["status"] == 500 and line["error_preview"] == "upstream down"
    assert len(await titles(memory_keel)) == (2 if call[0] == "create_todo_task" else 1)


async def test_a_hanging_server_times_out_into_the_fallback_and_is_hung_up_on(memory_keel):
    with StubOpenAI() as stub:
        stub.misbehaving(HANG, times=2)
        result = await stubbed(
            memory_keel, str(uuid.uuid4()), "Add buy milk", stub, {"timeout": 0.5, "retries": 1}
        )
        await asyncio.sleep(0.3)
        assert stub.closed >= 1  # the abandoned requests were closed, not left generating
    assert [f["reason"] for f in kinds(result, "model_fallback")] == ["timeout"]
    assert result.complete and result.reply == f"Created task: buy milk\n{FALLBACK_NOTE}"


async def test_the_turn_budget_ends_a_turn_honestly(memory_keel):
    with StubOpenAI() as stub:
        stub.misbehaving(HANG, times=2)
        result = await stubbed(memory_keel, str(uuid.uuid4()), "Add buy milk", stub, turn_seconds=1)
        await asyncio.sleep(0.3)
        assert stub.closed == 1  # cancelling the turn's call closed its request
    assert not result.complete and "ran out of time (1 s)" in result.reply
    assert kinds(result, "turn_timed_out") == [{"seconds": 1, "open_items": ["Add buy milk"]}]
    assert await titles(memory_keel) == []


async def test_a_stop_cancels_the_model_call_in_flight(memory_keel):
    stop = asyncio.Event()
    with StubOpenAI() as stub:
        stub.misbehaving(HANG)
        context = memory_keel.context(model=stub_model(stub))
        turn = asyncio.create_task(
            run_turn(memory_keel.graph, str(uuid.uuid4()), "Add buy milk", context, stop=stop)
        )
        while not stub.requests:
            await asyncio.sleep(0.05)
        stop.set()
        result = await turn
        await asyncio.sleep(0.3)
        assert stub.closed == 1
    assert kinds(result, "turn_stopped") and not result.complete


async def test_a_runaway_answer_is_bounded_by_max_tokens(memory_keel):
    with StubOpenAI() as stub:
        stub.misbehaving(RUNAWAY)
        stub.reply("Nothing to do.\nKEEL DONE: answered")
        result = await stubbed(
            memory_keel, str(uuid.uuid4()), "Tell me a story", stub, max_tokens=40
        )
        assert [r["max_tokens"] for r in stub.requests] == [40, 40]
        assert all(r["tool_choice"] == "auto" for r in stub.requests)
    assert result.complete and result.reply == "Nothing to do."


@pytest.mark.parametrize(
    "misbehave", ["empty stream", "empty reply", "only the done line", "repeated name"]
)
async def test_an_empty_or_garbled_answer_is_retried_once_then_finished_offline(
    memory_keel, misbehave
):
    with StubOpenAI() as stub:
        if misbehave == "empty stream":
            stub.misbehaving(EMPTY_STREAM, times=2)
        elif misbehave == "only the done line":  # nothing done, nothing said: never a reply
            stub.reply("KEEL DONE: added it")  # sent back to the open step
            stub.reply("  \nKEEL DONE: added it\n")  # again: unusable, asked once more
            stub.reply("KEEL DONE: added it")
        elif misbehave == "repeated name":
            stub.repeated_name("create_todo_task", {"title": "buy milk"}, times=2)
        else:
            stub.reply(tool_calls=[{"name": "create_todo_task", "args": {"title": "buy milk"}}])
            stub.reply("")
            stub.reply("\n")
        result = await stubbed(memory_keel, str(uuid.uuid4()), "Add buy milk", stub)
    empty = {"empty stream", "empty reply", "only the done line"}
    reason = "empty_answer" if misbehave in empty else "bad_tool_name"
    assert [f["reason"] for f in kinds(result, "model_fallback")] == [reason]
    assert result.complete and result.reply == f"Created task: buy milk\n{FALLBACK_NOTE}"
    assert await titles(memory_keel) == ["buy milk"]


@pytest.mark.parametrize("method", ["json_mode", "function_calling"])
async def test_the_plan_is_asked_for_by_the_configured_method(memory_keel, method):
    with StubOpenAI() as stub:
        stub.plan({"steps": [{"description": "put milk on the list", "tool": "create_todo_task"}]})
        planner = build_title_model(api_key="test", model="stub", base_url=stub.base_url)
        context = memory_keel.context(plan_model=planner, plan_method=method)
        result = await run_turn(memory_keel.graph, str(uuid.uuid4()), "Add milk", context)
        [asked] = stub.plan_requests
    assert result.todolist["items"][0]["description"] == "put milk on the list"
    if method == "json_mode":
        assert asked["response_format"] == {"type": "json_object"}
    else:
        assert asked["tool_choice"]["function"]["name"] == "PlanSteps"


async def test_refused_structured_output_is_a_visible_plan_fallback(memory_keel):
    with StubOpenAI() as stub:
        stub.refuse_plans = 400
        planner = build_title_model(
            api_key="test", model="stub", base_url=stub.base_url, limits=ModelLimits(retries=0)
        )
        with structlog.testing.capture_logs() as logs:
            result = await run_turn(
                memory_keel.graph,
                str(uuid.uuid4()),
                "Add milk",
                memory_keel.context(plan_model=planner),
            )
    [fallback] = kinds(result, "model_fallback")
    assert fallback["step"] == "plan" and fallback["reason"] == "structured_output_refused"
    assert fallback["status"] == 400
    [line] = [e for e in logs if e["event"] == "plan_from_model_failed"]
    assert line["status"] == 400 and line["error_preview"] == "response_format not supported"
    assert result.complete and result.reply == "Created task: milk"


def test_a_turn_run_by_keel_counts_its_budget_from_when_it_runs(memory_keel):
    stale = {"turn_deadline": time.time() - 60}  # e.g. a turn a crash cut off an hour ago
    context = memory_keel.context(turn_seconds=30)
    assert seconds_left(stale, context) < 0
    rerun = context.stopping_on(None, time.time() + context.turn_seconds)
    assert 0 < seconds_left(stale, rerun) <= 30
