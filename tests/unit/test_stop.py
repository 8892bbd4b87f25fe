"""Stopping a turn: it ends before its next tool calls, drops a confirmation with them, and the
conversation goes on normally afterwards."""

import asyncio
import uuid

from keel.graphs.run_turn import run_turn
from keel.graphs.runner import snapshot
from keel.nodes.response import STOPPED


def stopped() -> asyncio.Event:
    stop = asyncio.Event()
    stop.set()
    return stop


async def test_a_stopped_turn_runs_no_tool_and_says_so(memory_keel):
    cid = str(uuid.uuid4())
    result = await run_turn(
        memory_keel.graph, cid, "Add buy milk", memory_keel.context(), stop=stopped()
    )
    assert result.reply == STOPPED and result.complete is False
    assert [e["type"] for e in result.events][-1] == "turn_stopped"
    assert await memory_keel.store.list("local") == []
    log = await memory_keel.messages.page(cid)
    assert [(m.role, m.content) for m in log] == [  # the model was not even asked
        ("user", "Add buy milk"),
        ("assistant", STOPPED),
    ]
    plan = (await snapshot(memory_keel.graph, cid))["todolist"]
    assert {i["status"] for i in plan["items"]} == {"skipped"}
    again = await run_turn(memory_keel.graph, cid, "Add buy milk", memory_keel.context())
    assert again.reply == "Created task: buy milk"


async def test_stopping_the_answer_to_a_confirmation_drops_the_question(memory_keel):
    task = await memory_keel.store.create("local", "buy milk")
    cid = str(uuid.uuid4())
    asked = await run_turn(
        memory_keel.graph, cid, f"Delete task {task['id']}", memory_keel.context()
    )
    assert asked.awaiting_confirmation is not None
    answer = await run_turn(memory_keel.graph, cid, "yes", memory_keel.context(), stop=stopped())
    assert answer.reply == STOPPED and answer.awaiting_confirmation is None
    assert (await snapshot(memory_keel.graph, cid))["pending_confirmation"] is None
    assert await memory_keel.store.list("local") == [task]
    nxt = await run_turn(memory_keel.graph, cid, "Add eggs", memory_keel.context())
    assert nxt.reply == "Created task: eggs"
    assert [t["title"] for t in await memory_keel.store.list("local")] == ["buy milk", "eggs"]
