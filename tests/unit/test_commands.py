"""Commands as graph input: ``/reset`` typed, ``{"command": "reset"}``, ``{"command": "reopen"}``.

Whatever waits (nothing, a delete's yes/no), a reset is a reset: a new topic, the mission cleared
(reason ``user_requested``), the confirmation dropped so that a later "yes" does nothing. The same
holds through keel's runner and on the compiled graph driven as Studio and the SDK drive it.
"""

from __future__ import annotations

import uuid

import pytest
from langchain_core.messages import AIMessage

from keel.checkpoints.messages import COMMAND
from keel.graphs.builder import build_graph
from keel.graphs.result import reset_answer
from keel.graphs.run_turn import run_turn
from keel.graphs.runner import snapshot, thread_config
from keel.nodes.reopen_topic import DROPPED, NOT_FOUND
from keel.nodes.reset_conversation import RESET_MESSAGE, RESET_TITLE
from keel.nodes.state.commands import BadCommand

RESET_WAYS = ["typed", "typed loosely", "command"]


async def say(keel, cid, text, **command):
    return await run_turn(keel.graph, cid, text, keel.context(), command=command or None)


async def reset(keel, cid, way):
    if way == "command":
        return await say(keel, cid, "", command="reset")
    return await say(keel, cid, "/reset" if way == "typed" else "  /RESET ")


def kinds(result):
    return [e["type"] for e in result.events]


def mission_resets(result):
    return [e["data"] for e in result.events if e["type"] == "state_updated"]


@pytest.mark.parametrize("way", RESET_WAYS)
async def test_a_reset_with_nothing_pending_starts_afresh(keel, way):
    cid = str(uuid.uuid4())
    first = await say(keel, cid, "Add buy milk")
    logged = await keel.count_messages(cid)
    result = await reset(keel, cid, way)
    assert result.reply == RESET_MESSAGE
    assert result.mission is None and result.todolist is None and not result.complete
    assert result.agent_state == "response" and result.awaiting_confirmation is None
    assert result.topic["title"] == RESET_TITLE and result.topic["id"] != first.topic["id"]
    assert kinds(result) == ["topic_changed", "state_updated"]
    changed = result.events[0]["data"]
    assert changed["reason"] == "user_reset" and changed["previous_topic_id"] == first.topic["id"]
    assert mission_resets(result) == [
        {
            "mission_reset": True,
            "reason": "user_requested",
            "previous_todolist_id": first.todolist["id"],
        }
    ]
    assert reset_answer(result) == {
        "success": True,
        "message": RESET_MESSAGE,
        "new_topic_id": result.topic["id"],
        "previous_messages_preserved": True,
    }
    assert await keel.count_messages(cid) == logged + 1  # what was said is kept as it was
    *_, row = await keel.messages.page(cid)  # and where the reset happened, to show it again
    assert (row.role, row.content, row.topic_id) == (COMMAND, RESET_MESSAGE, result.topic["id"])
    state = (await keel.graph.aget_state(thread_config(cid))).values
    assert state["stats"]["turns"] == 1  # a command is no turn of the conversation
    assert state["audit"][-1]["reason"] == "user_requested"
    nxt = await say(keel, cid, "Show all")
    assert nxt.mission == "Show all" and mission_resets(nxt) == []
    assert nxt.topic["id"] == result.topic["id"]


@pytest.mark.parametrize("way", RESET_WAYS)
async def test_a_reset_while_a_delete_waits_drops_the_question(memory_keel, way):
    cid = str(uuid.uuid4())
    task = await memory_keel.store.create("local", "buy milk")
    asked = await say(memory_keel, cid, f"Delete task {task['id']}")
    assert asked.awaiting_confirmation
    result = await reset(memory_keel, cid, way)
    assert result.reply == RESET_MESSAGE  # a reset, not a "Cancelled: ..." answer
    assert result.tool_calls == [] and result.mission is None
    assert [r["reason"] for r in mission_resets(result)] == ["user_requested"]
    snap = await memory_keel.graph.aget_state(thread_config(cid))
    assert snap.next == () and not snap.interrupts
    assert (await snapshot(memory_keel.graph, cid))["pending_confirmation"] is None
    later = await say(memory_keel, cid, "yes")
    assert later.awaiting_confirmation is None and later.tool_calls == []
    assert await memory_keel.store.list("local") == [task]  # the task still exists


@pytest.mark.parametrize("graph_input", [{"content": "/reset"}, {"command": "reset"}])
async def test_the_graph_itself_resets_for_any_client(memory_keel, graph_input):
    """What Studio, the SDK and a notebook send: the graph's input, no keel runner."""
    cid, context = str(uuid.uuid4()), memory_keel.context()
    config = thread_config(cid)
    await memory_keel.graph.ainvoke({"content": "Add buy milk"}, config, context=context)
    await memory_keel.graph.ainvoke({"content": "Delete task 1"}, config, context=context)
    events, values = [], {}
    async for namespace, mode, chunk in memory_keel.graph.astream(
        graph_input, config, context=context, stream_mode=["custom", "values"], subgraphs=True
    ):
        if mode == "custom":
            events.append(chunk)
        elif not namespace:
            values = chunk
    assert values["window"][-1].text == RESET_MESSAGE
    assert values["mission"] is None and values["topic"]["title"] == RESET_TITLE
    assert [e["type"] for e in events] == ["topic_changed", "state_updated"]
    assert events[1]["data"]["reason"] == "user_requested"
    snap = await memory_keel.graph.aget_state(config)
    assert snap.next == ()
    assert "command" not in snap.values  # a command lasts its own run
    after = await memory_keel.graph.ainvoke({"content": "yes"}, config, context=context)
    assert after["mission"] is None and "__interrupt__" not in after  # a bare yes is no mission
    assert [t["title"] for t in await memory_keel.store.list("local")] == ["buy milk"]
    added = await memory_keel.graph.ainvoke({"content": "Add eggs"}, config, context=context)
    assert added["window"][-1].text == "Created task: eggs"  # no reset left over


async def two_topics(keel, cid):
    await say(keel, cid, "Add buy bread")
    await say(keel, cid, "Let's discuss the garden plans")
    first, second = await keel.topics.list(cid)
    return first, second


async def test_reopen_by_input_goes_back_to_the_topic(keel):
    cid = str(uuid.uuid4())
    first, second = await two_topics(keel, cid)
    logged = await keel.count_messages(cid)
    result = await say(keel, cid, "", command="reopen", topic_id=first.id)
    assert result.reply == f"Back to the topic: {first.title}"
    assert result.topic == {"id": first.id, "title": first.title}
    assert result.events[0] == {
        "type": "topic_changed",
        "data": {
            "previous_topic_id": second.id,
            "new_topic_id": first.id,
            "reason": "returned",
            "phrase": None,
            "title": first.title,
        },
    }
    assert kinds(result) == ["topic_changed", "state_updated"]
    rows = {t.id: t for t in await keel.topics.list(cid)}
    assert rows[first.id].is_active and not rows[second.id].is_active
    assert await keel.count_messages(cid) == logged + 1  # the reopen's own row, as a reset's
    (row,) = await keel.messages.page(cid, newest_first=True, limit=1)
    assert (row.role, row.content, row.topic_id) == ("command", result.reply, first.id)
    state = (await keel.graph.aget_state(thread_config(cid))).values
    assert state["audit"][-1]["kind"] == "topic_reopened"
    nxt = await say(keel, cid, "What's on my list?")
    assert nxt.topic["id"] == first.id and "topic_changed" not in kinds(nxt)


async def test_after_going_back_the_mission_shown_is_not_the_other_topics(keel):
    cid = str(uuid.uuid4())
    first, _ = await two_topics(keel, cid)
    before = await snapshot(keel.graph, cid)
    assert before["mission"] == "Let's discuss the garden plans"
    result = await say(keel, cid, "", command="reopen", topic_id=first.id)
    shown = await snapshot(keel.graph, cid)
    assert shown["topic"]["id"] == first.id
    assert shown["mission"] is None and shown["todolist"] is None
    assert result.mission is None and result.todolist is None
    assert mission_resets(result) == [
        {
            "mission_reset": True,
            "reason": "topic_reopened",
            "previous_todolist_id": before["todolist"]["id"],
        }
    ]
    nxt = await say(keel, cid, "What's on my list?")
    assert nxt.topic["id"] == first.id and nxt.mission == "What's on my list?"


async def test_reopening_the_active_or_an_unknown_topic_changes_no_topic(memory_keel):
    cid = str(uuid.uuid4())
    _, second = await two_topics(memory_keel, cid)
    same = await say(memory_keel, cid, "", command="reopen", topic_id=second.id)
    assert same.reply == f"Already on the topic: {second.title}" and same.events == []
    unknown = await say(memory_keel, cid, "", command="reopen", topic_id=str(uuid.uuid4()))
    assert unknown.reply == NOT_FOUND and unknown.events == []
    assert unknown.topic["id"] == second.id
    assert [t.is_active for t in await memory_keel.topics.list(cid)] == [False, True]


async def test_reopen_while_a_delete_waits_drops_the_question_and_says_so(memory_keel):
    cid = str(uuid.uuid4())
    first, _ = await two_topics(memory_keel, cid)
    asked = await say(memory_keel, cid, "Delete task 1")
    assert asked.awaiting_confirmation
    result = await say(memory_keel, cid, "", command="reopen", topic_id=first.id)
    assert result.reply == f"Back to the topic: {first.title}. {DROPPED}"
    assert (await snapshot(memory_keel.graph, cid))["pending_confirmation"] is None
    assert (await say(memory_keel, cid, "yes")).tool_calls == []
    assert [t["title"] for t in await memory_keel.store.list("local")] == ["buy bread"]


@pytest.mark.parametrize(
    "graph_input", [{"command": "launch"}, {"command": "reopen"}, {"command": "remind"}]
)
async def test_a_bad_command_is_refused_by_name_and_the_next_input_is_a_turn(
    memory_keel, graph_input
):
    cid, context = str(uuid.uuid4()), memory_keel.context()
    config = thread_config(cid)
    with pytest.raises(BadCommand):
        await memory_keel.graph.ainvoke(graph_input, config, context=context)
    done = await memory_keel.graph.ainvoke({"content": "Add eggs"}, config, context=context)
    assert isinstance(done["window"][-1], AIMessage)
    assert done["window"][-1].text == "Created task: eggs"


def test_the_drawing_shows_each_command_from_user_input_to_the_end():
    edges = {(e.source, e.target) for e in build_graph().get_graph().edges}
    for node in ("reset_conversation", "reopen_topic", "remind"):
        assert ("user_input", node) in edges and (node, "__end__") in edges
    branch = build_graph().builder.branches["user_input"]["route_input"]
    assert set(branch.ends.values()) == {
        "reset_conversation",
        "reopen_topic",
        "remind",
        "topic_detect",
        "tool_execution",
        "response",  # no message, the calls decided: the turn goes on (the served graph)
    }
