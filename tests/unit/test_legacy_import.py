"""A legacy session's flags become the conversation's state, and the conversation goes on."""

import uuid

from keel.graphs.builder import build_graph
from keel.graphs.legacy_import import import_legacy_session
from keel.graphs.run_turn import run_turn
from keel.graphs.runner import snapshot, thread_config


async def test_a_completed_session_reads_back_complete_and_takes_the_next_message(keel):
    cid = str(uuid.uuid4())
    imported = await import_legacy_session(
        keel.graph, cid, {"completed": True, "processing": False}, keel.context()
    )
    assert imported["agent_state"] == "response" and imported["complete"] is True
    result = await run_turn(keel.graph, cid, "Add buy milk", keel.context())
    assert result.complete and result.reply == "Created task: buy milk"
    reloaded = await snapshot(build_graph(keel.saver), cid)  # a fresh graph on the same saver
    assert reloaded["agent_state"] == "response" and reloaded["complete"] is True
    assert reloaded["stats"]["turns"] == 1


async def test_a_processing_session_maps_to_the_assistant(keel):
    cid = str(uuid.uuid4())
    imported = await import_legacy_session(keel.graph, cid, {"processing": True}, keel.context())
    assert imported["agent_state"] == "assistant" and imported["complete"] is False
    result = await run_turn(keel.graph, cid, "Show all", keel.context())
    assert result.agent_state == "response" and result.complete


async def test_an_ambiguous_session_is_audited_with_the_runs_clock(keel, clock):
    cid = str(uuid.uuid4())
    flags = {"completed": True, "processing": "yes", "owner": "ignored"}
    imported = await import_legacy_session(keel.graph, cid, flags, keel.context(clock=clock))
    assert imported["agent_state"] == "response" and imported["complete"] is True
    [entry] = (await keel.graph.aget_state(thread_config(cid))).values["audit"]
    assert entry["kind"] == "legacy_mapping" and entry["at"] == clock().isoformat()
    assert "both set" in entry["reason"] and "not a boolean" in entry["reason"]
    assert entry["detail"] == {"completed": True, "processing": "yes"}


async def test_a_session_with_neither_flag_waits_for_input(keel):
    cid = str(uuid.uuid4())
    imported = await import_legacy_session(keel.graph, cid, {}, keel.context())
    assert imported["agent_state"] == "user_input" and imported["complete"] is False
    assert (await keel.graph.aget_state(thread_config(cid))).next == ()
