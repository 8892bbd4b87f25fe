"""Tool-call ids from a provider that numbers its calls repeat; only a true replay matches."""

import uuid

from langchain_core.messages import AIMessage

from keel.graphs.run_turn import run_turn
from keel.nodes.support.waiting import call_key
from tests.unit.scripted import ScriptedModel

NUMBERED = "functions.create_todo_task:0"


def create(title: str) -> AIMessage:
    call = {"name": "create_todo_task", "args": {"title": title}, "id": NUMBERED}
    return AIMessage("", tool_calls=[{**call, "type": "tool_call"}])


async def test_the_same_call_id_in_other_turns_and_conversations_runs_each_call(memory_keel):
    model = ScriptedModel(
        replies=[
            create("apples"),
            AIMessage("Added apples.\nKEEL DONE: added"),
            create("pears"),
            AIMessage("Added pears.\nKEEL DONE: added"),
            create("plums"),
            AIMessage("Added plums.\nKEEL DONE: added"),
        ],
        seen=[],
    )
    context = memory_keel.context(model=model)
    first, second = str(uuid.uuid4()), str(uuid.uuid4())
    await run_turn(memory_keel.graph, first, "Add apples", context)
    pears = await run_turn(memory_keel.graph, second, "Add pears", context)
    plums = await run_turn(memory_keel.graph, first, "Add plums", context)
    assert pears.tool_calls[0]["result"]["title"] == "pears"
    assert plums.tool_calls[0]["result"]["title"] == "plums"
    titles = [t["title"] for t in await memory_keel.store.list("local")]
    assert titles == ["apples", "pears", "plums"]
    for cid, expected in ((first, ["apples", "plums"]), (second, ["pears"])):
        tools = [m for m in await memory_keel.messages.page(cid) if m.role == "tool"]
        assert [m.content.count(t) for m, t in zip(tools, expected, strict=True)] == [1] * len(
            expected
        )


def test_a_call_key_stays_within_the_key_columns():
    message = AIMessage("", id=f"{uuid.uuid4()}:turn-3:assistant-0")
    assert call_key(message, "call_1") == f"{message.id}:call_1"
    assert len(call_key(message, "x" * 500)) <= 180
    assert call_key(message, "x" * 500) != call_key(message, "x" * 499 + "y")
