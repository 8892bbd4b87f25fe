from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, ToolMessage

from keel.graphs.legacy_import import from_legacy
from keel.nodes.state import reducers as state_mod
from keel.nodes.state.machine import AgentState
from keel.nodes.state.reducers import bounded_window
from keel.nodes.state.schema import is_plan_complete
from tests.helpers import is_complete, is_processing


def test_legacy_completed_maps_to_response_and_complete():
    state, audit = from_legacy({"completed": True, "processing": False})
    assert state == {"agent_state": "response", "complete": True}
    assert is_complete(state) and not is_processing(state)
    assert audit is None


def test_legacy_processing_maps_to_assistant():
    state, audit = from_legacy({"completed": False, "processing": True})
    assert state["agent_state"] == AgentState.ASSISTANT
    assert is_processing(state) and not is_complete(state)
    assert audit is None


def test_legacy_neither_maps_to_user_input():
    assert from_legacy({})[0]["agent_state"] == AgentState.USER_INPUT
    assert from_legacy({"completed": False, "processing": False})[0]["agent_state"] == "user_input"


def test_ambiguous_legacy_records_the_reason_and_is_deterministic():
    first = from_legacy({"completed": True, "processing": True})
    assert first == from_legacy({"completed": True, "processing": True})
    state, audit = first
    assert state["agent_state"] == "response" and state["complete"] is True
    assert audit is not None and "both set" in audit["reason"]


def test_non_boolean_legacy_values_are_recorded():
    state, audit = from_legacy({"completed": "yes"})
    assert state["agent_state"] == "response"
    assert audit is not None and "not a boolean" in audit["reason"]


def test_tool_execution_counts_as_processing():
    assert is_processing({"agent_state": "tool_execution"})
    assert not is_processing({"agent_state": "response"})


def test_plan_complete_needs_every_step_done_or_skipped():
    items = [
        {"id": 1, "description": "a", "tool": None, "status": "done"},
        {"id": 2, "description": "b", "tool": None, "status": "skipped"},
    ]
    assert is_plan_complete({"id": "t", "items": items, "steps_completed": [1]})
    items.append({"id": 3, "description": "c", "tool": None, "status": "in_progress"})
    assert not is_plan_complete({"id": "t", "items": items, "steps_completed": [1]})
    assert not is_plan_complete(None)


def test_window_is_bounded_and_starts_at_a_human_message(monkeypatch):
    monkeypatch.setattr(state_mod, "WINDOW_MAX_MESSAGES", 5)
    window: list = []
    for n in range(4):
        call = {"name": "list_todo_tasks", "args": {}, "id": f"c{n}"}
        window = bounded_window(
            window,
            [
                HumanMessage(f"q{n}"),
                AIMessage("", tool_calls=[call]),
                ToolMessage("{}", tool_call_id=f"c{n}"),
                AIMessage(f"a{n}"),
            ],
        )
    assert len(window) <= 5
    assert window[0].type == "human" and window[0].content == "q3"


def test_the_conversation_is_rebuilt_from_its_writes_as_it_was_built(monkeypatch):
    """``messages`` read back from a checkpoint (a whole copy, then the writes since, in one
    batch) is what it was as each step added to it, also from a copy a server kept as JSON."""  # noqa: D205
    monkeypatch.setattr(state_mod, "MESSAGES_MAX", 9)
    rebuild = state_mod.conversation().reducer
    steps = [[HumanMessage(f"q{n}", id=f"q{n}"), AIMessage(f"a{n}", id=f"a{n}")] for n in range(5)]
    call = {"name": "list_todo_tasks", "args": {}, "id": "c1"}
    asked = [AIMessage("", tool_calls=[call], id="t"), ToolMessage("[]", id="r", tool_call_id="c1")]
    steps[2] = [*steps[2], *asked]
    gone = RemoveMessage(id="a0")  # the cut dropped it already
    steps.append(state_mod.unstreamed([gone, RemoveMessage(id="a4"), AIMessage("again", id="a5")]))
    steps.append([("user", "plain text, no id")])
    built: list = []
    for step in steps:
        built = rebuild(built, [step])
    shown = ["q2", "a2", "", "[]", "q3", "a3", "q4", "again", "plain text, no id"]
    assert [m.content for m in built] == shown
    for n in range(len(steps) + 1):  # a whole copy after any step, the writes since in a batch
        assert rebuild(rebuild([], steps[:n]), steps[n:]) == built
    copy = rebuild([], steps[:2])
    copy = rebuild(copy, steps[2:3])
    as_json = [m.model_dump() for m in copy]  # how a LangGraph server keeps it
    assert rebuild(as_json, steps[3:]) == rebuild(copy, steps[3:]) == built
    writes_as_json = [[m.model_dump() for m in step] for step in steps[3:5]]
    assert rebuild(as_json, [*writes_as_json, *steps[5:]]) == built
