"""keel picks its model settings for the server it is pointed at: a local server's model gets the
settings a small model needs, unless the person set them; a hosted one keeps the defaults."""

from __future__ import annotations

import uuid

import structlog

from keel.graphs.assembly import open_keel
from keel.graphs.model_server import LOCAL_DEFAULTS, fitted
from keel.graphs.run_turn import run_turn
from keel.graphs.settings import Settings
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
