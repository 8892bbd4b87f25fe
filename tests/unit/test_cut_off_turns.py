"""A turn cut off mid-way stands at LangGraph's checkpoint: the next turn runs it on from there.

Its outcome is kept under its own idempotency key, wherever it was cut off: at its input (the key
not yet in the state), between its steps, or after its tools.
"""

import uuid

import pytest

import keel.nodes.tool_execution as tool_node
from keel.checkpoints.requests import RequestStore
from keel.checkpoints.retention import prune_thread
from keel.graphs.run_turn import run_turn, settle
from keel.graphs.runner import ABANDONED, thread_config
from keel.nodes.run_context import TurnStart
from keel.nodes.tool_execution import NOT_RUN


class Died(Exception):
    """The process is gone."""


async def test_a_turn_cut_off_at_its_input_is_finished_and_kept_under_its_own_key(
    keel, monkeypatch
):
    cid, requests = str(uuid.uuid4()), RequestStore(keel.db)
    keyed = {"requests": requests}
    first = await run_turn(keel.graph, cid, "Add buy milk", keel.context(), key="k-1", **keyed)
    saver_type, put = type(keel.graph.checkpointer), type(keel.graph.checkpointer).aput

    async def input_only(self, config, checkpoint, metadata, new_versions):
        if metadata.get("source") != "input":
            raise Died
        return await put(self, config, checkpoint, metadata, new_versions)

    async def gone(self, config, writes, task_id, task_path=""):
        raise Died

    # the process dies once the input's checkpoint is written, before anything after it is
    monkeypatch.setattr(saver_type, "aput", input_only)
    monkeypatch.setattr(saver_type, "aput_writes", gone)
    with pytest.raises(Died):
        await run_turn(keel.graph, cid, "Add eggs", keel.context(), key="k-2", **keyed)
    monkeypatch.undo()
    cut = await keel.graph.aget_state(thread_config(cid))
    assert cut.metadata["source"] == "input" and [t.name for t in cut.tasks] == ["__start__"]
    assert cut.values["request_key"] == "k-1"  # the turn before's: the input is not taken in

    after = await run_turn(
        keel.graph, cid, "What's on my list?", keel.context(), key="k-3", **keyed
    )
    assert after.recovered_reply == "Created task: eggs"
    retried = await run_turn(keel.graph, cid, "Add eggs", keel.context(), key="k-2", **keyed)
    assert retried.replayed and retried.reply == "Created task: eggs"
    again = await run_turn(keel.graph, cid, "Add buy milk", keel.context(), key="k-1", **keyed)
    assert again.replayed and again.reply == first.reply
    assert [t["title"] for t in await keel.store.list("local")] == ["buy milk", "eggs"]


async def test_a_cut_off_turn_that_fails_again_is_abandoned_with_its_calls_not_run(
    keel, monkeypatch
):
    cid = str(uuid.uuid4())
    await run_turn(keel.graph, cid, "Add buy milk", keel.context())

    run_tool_call = tool_node.run_tool_call

    async def broken(call, *args, **kwargs):
        if call["name"] == "create_todo_task":
            raise RuntimeError("a tool that fails the same way every time")
        return await run_tool_call(call, *args, **kwargs)

    monkeypatch.setattr(tool_node, "run_tool_call", broken)
    with pytest.raises(RuntimeError):  # its calls were checkpointed, then the run failed
        await run_turn(keel.graph, cid, "Add eggs", keel.context())
    assert TurnStart.of(await keel.graph.aget_state(thread_config(cid))).cut_off

    _, abandoned = await settle(keel.graph, cid, keel.context(), None, None)
    assert abandoned is not None and abandoned.reply == ABANDONED.format(error="RuntimeError")
    monkeypatch.undo()
    snap = await keel.graph.aget_state(thread_config(cid))
    assert not TurnStart.of(snap).cut_off  # settled: no later turn finishes it again
    assert snap.values["window"][-1].text == NOT_RUN  # its calls answered: they never run
    added = await run_turn(keel.graph, cid, "Add tea", keel.context())
    assert added.reply == "Created task: tea" and not added.recovered_reply
    assert [t["title"] for t in await keel.store.list("local")] == ["buy milk", "tea"]


async def test_a_turn_run_on_after_its_start_was_pruned_offers_no_point_to_edit_from(
    keel, monkeypatch, messages_whole
):
    cid = str(uuid.uuid4())
    await run_turn(keel.graph, cid, "Add buy milk", keel.context())
    run_tool_call = tool_node.run_tool_call

    async def gone(call, *args, **kwargs):
        raise Died  # the calls were checkpointed; the process is gone before they run

    monkeypatch.setattr(tool_node, "run_tool_call", gone)
    with pytest.raises(Died):
        await run_turn(keel.graph, cid, "Add eggs", keel.context())
    monkeypatch.setattr(tool_node, "run_tool_call", run_tool_call)
    await prune_thread(keel.graph.checkpointer, cid, 1)  # only the cut-off turn's newest is kept
    after = await run_turn(keel.graph, cid, "What's on my list?", keel.context())
    assert after.recovered_reply == "Created task: eggs"
    opening = next(m for m in await keel.messages.page(cid) if m.content == "Add eggs")
    assert opening.from_checkpoint is None  # not BEGINNING: that would edit an empty conversation
