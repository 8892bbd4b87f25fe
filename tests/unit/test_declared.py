"""A small model is shown, in each turn, the tools and arguments its request can need, in compact
schemas, and the same ones from one plain turn to the next (``keel.nodes.models.declared``)."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import pytest
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool

from keel.graphs.assembly import open_keel
from keel.graphs.run_turn import run_turn
from keel.graphs.settings import Settings
from keel.nodes.models.declared import Declaring, _compact
from keel.tools.ask_user import ask_user
from keel.tools.next_step import record_next_step
from keel.tools.tasks.todo import TODO_TOOLS
from tests.stub_openai import StubOpenAI

EVERY_TURN = [
    "create_todo_task",
    "list_todo_tasks",
    "find_todo_tasks",
    "update_todo_task",
    "complete_todo_task",
    "delete_todo_task",
    "ask_user",
]


def declaring(*extra: Any) -> Declaring:
    return Declaring([*TODO_TOOLS, *extra, record_next_step, ask_user], "after_results")


def arguments(schemas: list[dict[str, Any]], name: str) -> set[str]:
    (schema,) = [s for s in schemas if s["function"]["name"] == name]
    return set(schema["function"]["parameters"]["properties"])


@pytest.mark.parametrize(
    "request_",
    ["add buy milk", "delete the dentist one", "what's on my list?", "I bought the milk",
     "rename task 2 to call dad", "yes", "what's the capital of France?"],
)  # fmt: skip
def test_plain_turns_show_the_same_tools_and_prompt(request_):
    """The prompt's start is the same from one plain turn to the next: the server's cache keeps
    it."""
    first = declaring().for_turn("add buy milk", "add buy milk")
    this = declaring().for_turn(request_, request_)
    assert this.names == EVERY_TURN
    assert this == first
    assert arguments(this.schemas, "create_todo_task") == {"title"}
    assert arguments(this.schemas, "list_todo_tasks") == {"offset", "status"}
    assert "schedule_todo_task" not in this.prompt and "find_todo_tasks" in this.prompt


def test_schemas_are_compact_and_a_third_of_the_full_declarations():
    shown = declaring().for_turn("add buy milk", "add buy milk")
    text = json.dumps(shown.schemas)
    for gone in ('"title": "', '"default"', "maxLength", "minItems", "anyOf"):
        assert gone not in text, gone
    (create,) = [s for s in shown.schemas if s["function"]["name"] == "create_todo_task"]
    assert create["function"]["description"] == "Create a new task."
    full = json.dumps([t.tool_call_schema.model_json_schema() for t in TODO_TOOLS])
    assert len(text) * 3 < len(full)


@pytest.mark.parametrize(
    ("request_", "fields"),
    [
        ("add milk to my shopping list for friday", {"list", "due"}),
        ("put call mom at the top", {"place"}),
        ("water the plants every sunday", {"due", "repeat"}),
        ("add eggs", set()),
    ],
)
def test_a_task_field_is_shown_when_the_person_speaks_of_one(request_, fields):
    shown = declaring().for_turn(request_, request_)
    assert arguments(shown.schemas, "create_todo_task") == {"title", *fields}


def test_an_answer_keeps_the_fields_and_tools_of_the_mission_it_answers():
    """The turn of an answer holds only the answer; the mission is what it completes."""
    mission = "add milk to the hardware list"
    shown = declaring().for_turn(f"friday\n{mission}", "friday", mission)
    assert arguments(shown.schemas, "create_todo_task") == {"title", "list", "due"}
    mission = "move the eggs to another list"
    shown = declaring().for_turn(f"groceries\n{mission}", "groceries", mission)
    assert "move_todo_task" in shown.names


def test_the_tool_a_step_of_the_plan_waits_for_is_shown():
    shown = declaring().for_turn("do it", "do it", planned=["schedule_todo_task"])
    assert "schedule_todo_task" in shown.names


def test_a_tool_is_shown_when_the_person_speaks_of_a_field_only_it_changes():
    """The reading finds no request in "make task 2 weekly"; the word "weekly" is a repeat."""
    shown = declaring().for_turn("make task 2 weekly", "make task 2 weekly")
    assert "repeat_todo_task" in shown.names


def test_a_bare_task_number_is_no_date():
    base = declaring().for_turn("add buy milk", "add buy milk")
    assert declaring().for_turn("mark 3 done", "mark 3 done") == base
    at_five = declaring().for_turn("call mom at 5pm", "call mom at 5pm")
    assert "due" in arguments(at_five.schemas, "create_todo_task")


@pytest.mark.parametrize(
    ("request_", "tool_"),
    [
        ("move the milk to the top", "move_todo_task"),
        ("push the dentist to friday", "schedule_todo_task"),
        ("make task 2 repeat every monday", "repeat_todo_task"),
        ("clear my shopping list", "clear_todo_list"),
        ("what lists do I have", "list_todo_lists"),
        ("show task 3", "get_todo_task"),
    ],
)
def test_a_tool_for_one_kind_of_request_is_shown_when_the_request_is_one(request_, tool_):
    shown = declaring().for_turn(request_, request_)
    assert tool_ in shown.names
    assert set(shown.names) - {tool_} == set(EVERY_TURN)


def test_task_numbers_are_no_dates_or_places():
    shown = declaring().for_turn("delete tasks 2 and 3", "delete tasks 2 and 3")
    assert arguments(shown.schemas, "create_todo_task") == {"title"}


def test_the_calls_of_one_turn_show_the_same_tools():
    """A plan's step is open in the turn's first round and done in the next: the next-step tool,
    shown only while steps were open, changed the prompt between the two calls."""
    with StubOpenAI() as stub:
        stub.props = LLAMA_PROPS
        stub.reply("Milk")
        stub.reply(tool_calls=[{"name": "create_todo_task", "args": {"title": "buy milk"}}])
        stub.reply("Added.\nKEEL DONE: added")
        asyncio.run(one_turn(stub, "add buy milk"))
    first, second = [r for r in stub.requests if r.get("tools")]
    assert first["tools"] == second["tools"]
    assert first["messages"][0] == second["messages"][0]


def on_a_local_server(stub: StubOpenAI) -> Settings:
    return Settings(database_url="memory", openai_api_key="local", openai_base_url=stub.base_url)


async def one_turn(stub: StubOpenAI, said: str) -> None:
    async with open_keel(on_a_local_server(stub)) as keel:
        await run_turn(keel.graph, str(uuid.uuid4()), said, keel.resources.context())


def test_a_developers_own_tool_is_shown_in_every_turn():
    @tool
    async def water_plant(name: str) -> str:
        """Water a plant."""
        return name

    shown = declaring(water_plant).for_turn("add buy milk", "add buy milk")
    assert "water_plant" in shown.names
    (own,) = [s for s in shown.schemas if s["function"]["name"] == "water_plant"]
    assert own == convert_to_openai_tool(water_plant)  # as it is declared


def test_a_nested_property_named_like_a_left_out_key_is_kept():
    schema = {"type": "object", "properties": {"title": {"type": "string", "title": "Title"}}}
    assert _compact(schema) == {"type": "object", "properties": {"title": {"type": "string"}}}


async def test_a_call_written_as_text_for_a_tool_not_shown_still_runs():
    """Text calls are read against every bound tool, as the module promises."""
    with StubOpenAI() as stub:
        stub.props = LLAMA_PROPS
        stub.reply("Milk")
        call = {"name": "create_todo_task", "arguments": {"title": "milk", "due": None}}
        stub.reply(json.dumps(call))
        stub.reply("Added.\nKEEL DONE: added")
        async with open_keel(on_a_local_server(stub)) as keel:
            await run_turn(keel.graph, str(uuid.uuid4()), "add milk", keel.resources.context())
            tasks = await keel.resources.store.list("local")
    assert [t["title"] for t in tasks] == ["milk"]
    shown = [r for r in stub.requests if r.get("tools")][0]["tools"]
    create = [t for t in shown if t["function"]["name"] == "create_todo_task"][0]
    assert "due" not in create["function"]["parameters"]["properties"]  # shown without it


LLAMA_PROPS = {"default_generation_settings": {"n_ctx": 8192}, "total_slots": 1}


async def test_a_model_on_a_local_server_is_shown_what_each_turn_needs_and_loses_nothing():
    with StubOpenAI() as stub:
        stub.props = LLAMA_PROPS
        stub.reply("Groceries")  # the new topic's title
        eggs = {"title": "eggs", "list": "groceries", "due": "friday"}
        stub.reply(tool_calls=[{"name": "create_todo_task", "args": eggs}])
        stub.reply("Added eggs.\nKEEL DONE: added")
        stub.reply(tool_calls=[{"name": "move_todo_task", "args": {"task_id": 1, "place": "top"}}])
        stub.reply("Moved.\nKEEL DONE: moved")
        stub.reply(tool_calls=[{"name": "complete_todo_task", "args": {"task_id": 1}}])
        stub.reply("Done.\nKEEL DONE: completed")
        async with open_keel(on_a_local_server(stub)) as keel:
            context, cid = keel.resources.context(), str(uuid.uuid4())
            for said in ("put eggs on my grocery list for friday", "move eggs to the top",
                         "I bought the eggs"):  # fmt: skip
                await run_turn(keel.graph, cid, said, context)
            (task,) = await keel.resources.store.list("local", list_=None)
    assert (task["title"], task["list"], task["completed"]) == ("eggs", "groceries", True)
    calls = [r for r in stub.requests if r.get("tools")]
    shown = [[t["function"]["name"] for t in r["tools"]] for r in calls]
    assert shown[0] == shown[1] == EVERY_TURN
    assert "move_todo_task" in shown[2] and shown[4] == EVERY_TURN
    create = calls[0]["tools"][0]["function"]["parameters"]["properties"]
    assert set(create) == {"title", "list", "due"}
    prompts = [r["messages"][0]["content"] for r in calls]
    assert prompts[0] == prompts[4] and "move_todo_task" not in prompts[0]


async def test_a_small_model_that_answers_a_step_in_words_is_asked_again_for_a_call():
    """Qwen2.5 1.5B answered "mark water the plants as done" with "Mark task 1 as done.", and
    wrote it again when reminded of the open step."""
    with StubOpenAI() as stub:
        stub.props = LLAMA_PROPS
        stub.reply("Plants")
        stub.reply(tool_calls=[{"name": "create_todo_task", "args": {"title": "water plants"}}])
        stub.reply("Added.\nKEEL DONE: added")
        stub.reply("Mark task 1 as done.")
        stub.reply(tool_calls=[{"name": "complete_todo_task", "args": {"task_id": 1}}])
        stub.reply("Completed task: water plants\nKEEL DONE: completed")
        async with open_keel(on_a_local_server(stub)) as keel:
            context, cid = keel.resources.context(), str(uuid.uuid4())
            await run_turn(keel.graph, cid, "add water plants", context)
            done = await run_turn(keel.graph, cid, "mark water plants as done", context)
            (task,) = await keel.resources.store.list("local")
    assert task["completed"] and done.complete
    choices = [r.get("tool_choice") for r in stub.requests if r.get("tools")]
    assert choices == ["auto", "auto", "auto", "required", "auto"]


async def test_the_answer_to_a_question_is_shown_what_its_request_needs():
    """The answer's turn holds only "friday"; the mission says the hardware list."""
    with StubOpenAI() as stub:
        stub.props = LLAMA_PROPS
        stub.reply("Hardware")
        stub.reply(tool_calls=[{"name": "ask_user", "args": {"question": "When is it due?"}}])
        milk = {"title": "milk", "list": "hardware", "due": "friday"}
        stub.reply(tool_calls=[{"name": "create_todo_task", "args": milk}])
        stub.reply("Added.\nKEEL DONE: added")
        async with open_keel(on_a_local_server(stub)) as keel:
            context, cid = keel.resources.context(), str(uuid.uuid4())
            await run_turn(keel.graph, cid, "add milk to the hardware list", context)
            await run_turn(keel.graph, cid, "friday", context)
            (task,) = await keel.resources.store.list("local", list_=None)
    assert task["list"] == "hardware" and task["due"]
    answered = [r for r in stub.requests if r.get("tools")][1]
    create = [t for t in answered["tools"] if t["function"]["name"] == "create_todo_task"][0]
    assert set(create["function"]["parameters"]["properties"]) == {"title", "list", "due"}
