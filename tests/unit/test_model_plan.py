"""With a real model, the mission's plan comes from the model (structured output), validated,
with the tools' phrasings as the fallback; against the local OpenAI-compatible stub."""

import uuid

import structlog

from keel.graphs.run_turn import run_turn
from keel.nodes.models.chat import build_title_model
from tests.stub_openai import StubOpenAI


async def plan_turn(keel, stub, text):
    planner = build_title_model(api_key="test", model="stub", base_url=stub.base_url)
    context = keel.context(plan_model=planner)
    with structlog.testing.capture_logs() as logs:
        result = await run_turn(keel.graph, str(uuid.uuid4()), text, context)
    return result, [e["event"] for e in logs]


def steps(result):
    return [(i["description"], i["tool"], i["status"]) for i in result.todolist["items"]]


async def test_the_plan_is_the_models(memory_keel):
    with StubOpenAI() as stub:
        stub.plan(
            {
                "steps": [
                    {"description": "put milk on the list", "tool": "create_todo_task"},
                    {"description": "show the whole list", "tool": "list_todo_tasks"},
                ]
            }
        )
        result, events = await plan_turn(memory_keel, stub, "Add milk and show all")
        [asked] = stub.plan_requests
    assert steps(result) == [
        ("put milk on the list", "create_todo_task", "done"),
        ("show the whole list", "list_todo_tasks", "done"),
    ]
    assert result.complete and "todolist_planned" in events
    schema = asked["response_format"]["json_schema"]
    assert schema["name"] == "PlanSteps" and "steps" in schema["schema"]["properties"]
    assert "create_todo_task" in asked["messages"][0]["content"]  # the tools are listed


async def test_an_unusable_plan_falls_back_to_the_phrasings(memory_keel):
    with StubOpenAI() as stub:
        stub.plan({"steps": [{"description": "wipe everything", "tool": "rm_rf"}]})
        result, events = await plan_turn(memory_keel, stub, "Add milk and show all")
    assert steps(result) == [
        ("Add milk", "create_todo_task", "done"),
        ("List the tasks", "list_todo_tasks", "done"),
    ]
    assert "plan_from_model_unusable" in events


async def test_a_failing_or_empty_plan_falls_back_too(memory_keel):
    with StubOpenAI() as stub:
        stub.plan({"message": "overloaded"}, status=500)
        stub.plan({"message": "overloaded"}, status=500)  # and the one retry
        failed, events = await plan_turn(memory_keel, stub, "Add milk")
        stub.plan({"steps": []})
        empty, more = await plan_turn(memory_keel, stub, "Add eggs")
    assert steps(failed) == [("Add milk", "create_todo_task", "done")]
    assert steps(empty) == [("Add eggs", "create_todo_task", "done")]
    assert "plan_from_model_failed" in events and "plan_from_model_unusable" in more
