"""Completion gating: DONE marker AND nothing open AND no pending tool call; the loop limit."""

import uuid

from langchain_core.messages import AIMessage

from keel.graphs.run_turn import run_turn
from keel.nodes.models.markers import has_done
from keel.nodes.models.notes import NUDGE_PREFIX
from tests.unit.scripted import ScriptedModel, call


async def run(memory_keel, replies, text="Add milk and add eggs", **ctx):
    model = ScriptedModel(replies=list(replies), seen=[])
    context = memory_keel.context(model=model, **ctx)
    result = await run_turn(memory_keel.graph, str(uuid.uuid4()), text, context)
    return result, model


async def test_done_with_open_items_loops_back_with_a_nudge(memory_keel):
    replies = [
        AIMessage("", tool_calls=[call("create_todo_task", title="milk")]),
        AIMessage("Created task: milk\nKEEL DONE: all done"),  # premature: eggs is still open
        AIMessage("", tool_calls=[call("create_todo_task", title="eggs")]),
        AIMessage("Created task: eggs\nKEEL DONE: both added"),
    ]
    result, model = await run(memory_keel, replies)
    assert len(model.seen) == 4
    nudge = model.seen[2][-1]
    assert nudge.type == "human" and nudge.content.startswith(NUDGE_PREFIX)
    assert "Add eggs" in nudge.content and "milk" not in nudge.content
    assert result.complete and result.reply == "Created task: eggs"
    assert [i["status"] for i in result.todolist["items"]] == ["done", "done"]


async def test_no_done_marker_loops(memory_keel):
    replies = [AIMessage("Working on it."), AIMessage("Here you go.\nkeel done: answered")]
    result, model = await run(memory_keel, replies, text="hello")
    assert len(model.seen) == 2
    assert result.complete and result.reply == "Here you go."


async def test_done_with_a_pending_tool_call_does_not_complete(memory_keel):
    replies = [
        AIMessage("KEEL DONE: nothing to do", tool_calls=[call("list_todo_tasks")]),
        AIMessage("Your list is empty.\nKEEL DONE: listed"),
    ]
    result, model = await run(memory_keel, replies, text="show all")
    assert len(model.seen) == 2
    assert result.complete and [t["name"] for t in result.tool_calls] == ["list_todo_tasks"]


async def test_loop_limit_ends_the_turn_incomplete_and_says_so(memory_keel):
    replies = [AIMessage(f"Still thinking ({n})") for n in range(4)]  # never the same twice
    result, model = await run(memory_keel, replies, text="hello", loop_limit=3)
    assert len(model.seen) == 4  # the first call plus three loops
    assert not result.complete
    assert [e["type"] for e in result.events] == ["loop_limit"]
    assert result.events[0]["data"]["limit"] == 3
    assert "I stopped after 3 rounds" in result.reply


async def test_done_line_never_reaches_the_user(memory_keel):
    replies = [AIMessage("Line one\n  KEEL DONE: secret summary\nLine two")]
    result, _ = await run(memory_keel, replies, text="hello")
    assert result.complete and result.reply == "Line one\nLine two"


async def test_configured_done_marker(memory_keel, monkeypatch):
    monkeypatch.setenv("KEEL_DONE_MARKER", r"^\s*FINISHED$")
    from keel.graphs.settings import Settings

    marker = Settings().done_marker
    replies = [AIMessage("Answer\nKEEL DONE: old style"), AIMessage("Answer\nfinished")]
    result, model = await run(memory_keel, replies, text="hello", done_marker=marker)
    assert len(model.seen) == 2 and result.complete and result.reply == "Answer"


async def test_open_items_left_after_a_nudge_are_skipped_not_faked(memory_keel):
    replies = [AIMessage("I did it.\nKEEL DONE: yes"), AIMessage("Really done.\nKEEL DONE: yes")]
    result, model = await run(memory_keel, replies, text="add milk")
    assert len(model.seen) == 2
    assert result.complete
    [item] = result.todolist["items"]
    assert item["status"] == "skipped"
    assert await memory_keel.store.list("local") == []


async def test_prose_that_starts_with_done_is_the_reply_not_the_marker(memory_keel):
    replies = [AIMessage("Done: I saved the task oat milk.\nKEEL DONE: saved")]
    result, model = await run(memory_keel, replies, text="hello")
    assert len(model.seen) == 1 and result.complete
    assert result.reply == "Done: I saved the task oat milk."


def test_the_marker_is_keels_name_before_done_in_any_case():
    assert has_done("KEEL DONE: added") and has_done("  keel done: added")
    assert has_done("Added milk.\nKeel Done: added")
    for prose in ("Done: I saved the task oat milk.", "DONE: added", "done", "KEEL DONE added"):
        assert not has_done(prose), prose
