import json
from datetime import UTC, datetime

from pydantic import TypeAdapter

from keel.api.message_schemas import STREAM_FRAME, STREAM_PARTS
from keel.api.terminal_view import describe_event
from keel.graphs.result import TurnResult
from keel.nodes.event_types import StreamEvent
from keel.nodes.events import (
    loop_limit,
    mission_reset,
    resumed,
    token,
    tool_called,
    topic_changed,
    turn_stopped,
)

AT = datetime(2026, 11, 22, 10, tzinfo=UTC)
EVENTS = [
    topic_changed("t1", "t2", "Add buy milk", "phrase", "new topic"),
    mission_reset("user_requested", "plan-1", AT)[0],
    tool_called("create_todo_task", {"title": "buy milk"}, {"id": 1}, "Created task 1: buy milk"),
    resumed(2, "Add buy milk", "token_budget", None),
    loop_limit(3, 3, ["Add buy milk"]),
    turn_stopped(1),
]


def test_each_builder_makes_the_documented_wire_shape():
    assert [json.dumps(e) for e in EVENTS] == [
        '{"type": "topic_changed", "data": {"previous_topic_id": "t1", "new_topic_id": "t2", '
        '"reason": "phrase", "phrase": "new topic", "title": "Add buy milk"}}',
        '{"type": "state_updated", "data": {"mission_reset": true, "reason": "user_requested", '
        '"previous_todolist_id": "plan-1"}}',
        '{"type": "tool_call", "data": {"name": "create_todo_task", "args": {"title": "buy milk"}, '
        '"result": {"id": 1}, "text": "Created task 1: buy milk"}}',
        '{"type": "resumed", "data": {"step": 2, "description": "Add buy milk", '
        '"reason": "token_budget", "backup_id": null}}',
        '{"type": "loop_limit", "data": {"loops": 3, "limit": 3, "open_items": ["Add buy milk"]}}',
        '{"type": "turn_stopped", "data": {"loops": 1}}',
    ]
    assert json.dumps(token("Created")) == '{"type": "token", "data": {"text": "Created"}}'


def test_a_turn_result_keeps_every_event_as_it_was_built():
    result = TurnResult(
        conversation_id="c", reply="ok", agent_state="response", complete=True, events=EVENTS
    )
    dumped = json.loads(result.model_dump_json())
    assert dumped["events"] == EVENTS
    assert [list(e["data"]) for e in dumped["events"]] == [list(e["data"]) for e in EVENTS]
    assert TurnResult.model_validate_json(result.model_dump_json()) == result


def test_the_stream_schema_is_the_union_told_apart_by_type():
    adapter = TypeAdapter(StreamEvent)
    assert adapter.validate_python(token("x")) == token("x")
    assert set(STREAM_FRAME["discriminator"]["mapping"]) == {
        "topic_changed",
        "state_updated",
        "tool_call",
        "resumed",
        "loop_limit",
        "turn_stopped",
        "model_fallback",
        "turn_timed_out",
        "round_started",
        "token",
    }
    assert {"ToolCallEvent", "ToolCallData", "TokenEvent"} <= set(STREAM_PARTS)


def test_the_chat_describes_each_event_in_plain_words():
    assert [describe_event(e) for e in EVENTS] == [
        "New topic: Add buy milk",
        "Mission reset (requested)",
        "Created task 1: buy milk",
        "Starting new session from step 2",
        "Loop limit reached after 3 rounds",
        "turn_stopped: {'loops': 1}",
    ]
