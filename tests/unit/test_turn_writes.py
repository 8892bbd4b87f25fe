"""What a turn writes: only what it changed, its message lists as the messages it added.

A turn's pending writes (and so what LangGraph stores for each of its steps) hold the messages it
added and the removal of those the bound dropped, not the conversation's whole list again.
"""

import uuid

from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from keel.graphs.builder import _list_update
from keel.graphs.run_turn import run_turn
from keel.graphs.runner import thread_config
from keel.nodes.state import reducers
from keel.nodes.state.reducers import UNSTREAMED, conversation


def _messages(n: int, start: int = 0) -> list:
    return [
        (HumanMessage if k % 2 == 0 else AIMessage)(f"m{k}", id=f"m{k}")
        for k in range(start, start + n)
    ]


def _applied(before: list, update: list) -> list:
    return conversation().reducer(before, [update])


def test_added_messages_are_the_whole_update():
    before = _messages(4)
    after = [*before, *_messages(2, start=4)]
    update = _list_update(after, before)
    assert [m.id for m in update] == ["m4", "m5"]
    assert _applied(before, update) == after


def test_messages_dropped_from_the_start_are_removed_by_id():
    before = _messages(6)
    after = [*before[2:], *_messages(2, start=6)]
    update = _list_update(after, before)
    assert [type(m) for m in update[:2]] == [RemoveMessage, RemoveMessage]
    assert [m.id for m in update] == ["m0", "m1", "m6", "m7"]
    assert _applied(before, update) == after


def test_a_list_changed_otherwise_is_written_whole():
    before = _messages(4)
    edited = HumanMessage("m2, edited", id="m2")
    for after in ([before[0], before[1], edited, before[3]], [before[1], before[0]]):
        update = _list_update(after, before)
        assert update[0].id == REMOVE_ALL_MESSAGES
        assert _applied(before, update) == after
    assert _applied(before, _list_update([], before)) == []


async def test_a_turn_writes_its_new_messages_not_the_conversation_again(keel, monkeypatch):
    monkeypatch.setattr(reducers, "MESSAGES_MAX", 12)  # the bound drops messages every turn
    cid = str(uuid.uuid4())
    for n in range(8):
        await run_turn(keel.graph, cid, f"Add item {n}", keel.context())
    saver = keel.graph.checkpointer
    written = [
        value[UNSTREAMED]
        for kept in [c async for c in saver.alist(thread_config(cid))]
        for _, channel, value in kept.pending_writes or []
        if channel == "messages"
    ]
    assert written
    assert all(len(w) <= 6 for w in written)  # a turn's messages, removals of the oldest
    assert not any(m.id == REMOVE_ALL_MESSAGES for w in written for m in w)
    state = (await keel.graph.aget_state(thread_config(cid))).values
    assert len(state["messages"]) <= 12 and state["messages"][0].type == "human"
    assert state["messages"][-1].text.startswith("Created task")
