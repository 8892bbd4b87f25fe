"""A turn cut off mid-way stands at LangGraph's checkpoint: the next turn runs it on from there.

Its outcome is kept under its own idempotency key, wherever it was cut off: at its input (the key
not yet in the state), between its steps, or after its tools.
"""

import uuid

import pytest

from keel.checkpoints.requests import RequestStore
from keel.graphs.run_turn import run_turn
from keel.graphs.runner import thread_config


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
