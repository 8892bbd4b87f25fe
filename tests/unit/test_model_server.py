"""keel picks its model settings for the server it is pointed at: a local server's model gets the
settings a small model needs, unless the person set them; a hosted one keeps the defaults."""

from __future__ import annotations

import uuid

import pytest
import structlog

from keel.graphs.assembly import open_keel
from keel.graphs.model_server import LOCAL_DEFAULTS, fitted, local_server
from keel.graphs.run_turn import run_turn
from keel.graphs.settings import Settings
from keel.nodes.models.chat import build_agent_model
from keel.tools.spec import unheard
from keel.tools.tasks.todo import TODO_TOOLS
from tests.stub_openai import StubOpenAI

LLAMA_PROPS = {"default_generation_settings": {"n_ctx": 8192}, "total_slots": 1}


def settings_for(base_url: str, **given: object) -> Settings:
    return Settings(
        database_url="memory", openai_api_key="local", openai_base_url=base_url, **given
    )


async def test_a_model_on_llama_cpp_gets_the_local_settings_the_person_did_not_set():
    with StubOpenAI() as stub:
        stub.props = LLAMA_PROPS
        with structlog.testing.capture_logs() as logs:
            settings = await fitted(settings_for(stub.base_url, model_temperature=0.7))
    assert settings.model_temperature == 0.7  # the person's own setting wins
    assert settings.done_rule == "after_results" and settings.plan_method == "off"
    assert settings.model_timeout_seconds == 120 and settings.turn_seconds == 600
    (said,) = [e for e in logs if e["event"] == "model_on_a_local_server"]
    assert said["server"] == "llama.cpp" and said["kept_as_set"] == ["model_temperature"]
    assert set(said["picked"]) == LOCAL_DEFAULTS.keys() - {"model_temperature"}


async def test_a_hosted_model_and_an_unreachable_server_keep_the_defaults():
    defaults = Settings(database_url="memory")
    with StubOpenAI() as stub:  # answers /v1 only, as OpenAI does
        hosted = await fitted(settings_for(stub.base_url))
    gone = await fitted(settings_for("http://127.0.0.1:9/v1"))  # nothing listens there
    for settings in (hosted, gone):
        for name in LOCAL_DEFAULTS:
            assert getattr(settings, name) == getattr(defaults, name), name


async def test_a_capable_model_on_a_local_server_loses_nothing_with_the_local_settings():
    """A model that calls its tools and then says DONE after the results, as asked."""
    with StubOpenAI() as stub:
        stub.props = LLAMA_PROPS
        stub.reply("Shopping")  # the new topic's title comes first
        stub.reply(tool_calls=[{"name": "create_todo_task", "args": {"title": "buy milk"}}])
        stub.reply("Created task: buy milk\nKEEL DONE: added it")
        async with open_keel(settings_for(stub.base_url)) as keel:
            context = keel.resources.context()
            result = await run_turn(keel.graph, str(uuid.uuid4()), "Add buy milk", context)
            tasks = await keel.resources.store.list("local")
    assert result.complete and result.reply == "Created task: buy milk"
    assert [t["title"] for t in tasks] == ["buy milk"]
    assert all(r["temperature"] == 0 for r in stub.requests)
    assert not stub.plan_requests  # the plan came from the offline reading
    agent = [r for r in stub.requests if r.get("tools")]
    assert len(agent) == 2 and "DONE" not in agent[0]["messages"][0]["content"]  # asked after
    assert "DONE" in agent[1]["messages"][-1]["content"]  # the results, for the answer


async def test_a_list_or_a_date_the_person_never_said_is_dropped_from_the_models_call(
    memory_keel,
):
    """A small model put "add buy milk" on a "shopping" list due Monday, and listed only that
    list for "show my tasks"."""
    with StubOpenAI() as stub:
        made_up = {"title": "buy milk", "list": "shopping", "due": "monday", "place": "top"}
        stub.reply(tool_calls=[{"name": "create_todo_task", "args": made_up}])
        stub.reply("Created task: buy milk\nKEEL DONE: added it")
        said = {"title": "eggs", "list": "groceries", "due": "friday"}
        stub.reply(tool_calls=[{"name": "create_todo_task", "args": said}])
        stub.reply("Created task: eggs\nKEEL DONE: added it")
        stub.reply(tool_calls=[{"name": "list_todo_tasks", "args": {"list": "shopping"}}])
        stub.reply("Here they are.\nKEEL DONE: listed")
        model = build_agent_model(TODO_TOOLS, api_key="test", model="stub", base_url=stub.base_url)
        context, cid = memory_keel.context(model=model), str(uuid.uuid4())
        await run_turn(memory_keel.graph, cid, "add buy milk", context)
        await run_turn(memory_keel.graph, cid, "put eggs on my grocery list for friday", context)
        listed = await run_turn(memory_keel.graph, cid, "show my tasks", context)
    milk, eggs = await memory_keel.store.list("local", list_=None)
    assert (milk["title"], milk["list"], milk["due"]) == ("buy milk", "todo", None)
    assert (eggs["title"], eggs["list"]) == ("eggs", "groceries") and eggs["due"]
    shown = [c["args"] for c in listed.tool_calls if c["name"] == "list_todo_tasks"]
    assert shown == [{}]  # every list, as asked


@pytest.mark.parametrize(
    ("tool", "args", "said"),
    [
        ("list_todo_tasks", {"due": "overdue"}, "What's overdue?"),
        ("list_todo_tasks", {"due": "overdue"}, "anything late?"),
        ("create_todo_task", {"title": "call mom", "repeat": "every sunday"}, "call mom sundays"),
        ("create_todo_task", {"title": "gym", "repeat": "twice a week"}, "gym twice a week"),
        ("create_todo_task", {"title": "gifts", "due": "christmas"}, "buy gifts for christmas"),
        ("create_todo_task", {"title": "eggs", "list": "groceries"}, "eggs on the grocery list"),
        ("create_todo_task", {"title": "milk", "list": "groceries", "due": "friday"}, "add milk to "
         "groceries\nWhen is it due?\nfriday"),  # an answer after the message it completes
    ],
)  # fmt: skip
def test_what_the_person_said_in_their_own_words_is_kept(tool, args, said):
    assert unheard({t.name: t for t in TODO_TOOLS}[tool], args, said) == []


async def test_a_server_that_wants_its_key_is_asked_with_it():
    with StubOpenAI() as stub:
        stub.props = LLAMA_PROPS
        stub.props_key = "s3cret"
        refused = await local_server(stub.base_url, "wrong")
        known = await local_server(stub.base_url, "s3cret")
    assert (refused, known) == (None, "llama.cpp")


async def test_a_llama_server_still_loading_its_model_is_known_by_its_answer():
    """llama-server answers every request 503 "Loading model" until its model is loaded: keel
    started beside it still takes the local settings."""
    with StubOpenAI() as stub:
        stub.loading = True
        settings = await fitted(settings_for(stub.base_url))
    assert settings.done_rule == "after_results" and settings.tool_schemas == "lean"
