"""The exact window the model sees for given histories."""

from datetime import UTC, datetime, timedelta

from keel.checkpoints.messages import LoggedMessage
from keel.nodes.context.recency import render_history, select_history

NOW = datetime(2026, 1, 7, 12, 0, tzinfo=UTC)


def msgs(n, topic="t1", start=0, minutes_ago=1, role_cycle=("user", "assistant")):
    return [
        LoggedMessage(
            id=start + i,
            key=f"k{start + i}",
            role=role_cycle[i % len(role_cycle)],
            content=f"m{start + i}",
            topic_id=topic,
            created_at=NOW - timedelta(minutes=minutes_ago),
            tool_name=None,
        )
        for i in range(n)
    ]


def tool(i, topic="t1", minutes_ago=1):
    return LoggedMessage(
        id=i,
        key=f"k{i}",
        role="tool",
        content=f"r{i}",
        topic_id=topic,
        created_at=NOW - timedelta(minutes=minutes_ago),
        tool_name="list_todo_tasks",
    )


def contents(entries, section=None):
    return [e["content"] for e in entries if section is None or e["section"] == section]


def test_last_six_are_current_and_at_most_five_older_are_earlier():
    history = select_history(msgs(20), "t1", False, NOW)
    assert contents(history, "current") == [f"m{i}" for i in range(14, 20)]
    assert contents(history, "earlier") == [f"m{i}" for i in range(9, 14)]
    assert contents(history) == [f"m{i}" for i in range(9, 20)]


def test_short_history_is_all_current():
    history = select_history(msgs(4), "t1", False, NOW)
    assert contents(history, "current") == ["m0", "m1", "m2", "m3"]
    assert contents(history, "earlier") == []


def test_seven_messages_give_one_earlier():
    history = select_history(msgs(7), "t1", False, NOW)
    assert contents(history, "earlier") == ["m0"]
    assert contents(history, "current") == [f"m{i}" for i in range(1, 7)]


def test_other_topics_never_enter_the_normal_window():
    logged = msgs(5, topic="old") + msgs(3, topic="t1", start=5)
    assert contents(select_history(logged, "t1", False, NOW)) == ["m5", "m6", "m7"]


def test_after_a_topic_change_only_the_last_four_without_tool_results():
    logged = msgs(6, topic="old") + [tool(6, topic="old")] + msgs(2, topic="old", start=7)
    history = select_history(logged, "new", True, NOW)
    assert contents(history) == ["m4", "m5", "m7", "m8"]
    assert all(e["section"] == "current" for e in history)


def test_tool_results_older_than_thirty_minutes_are_left_out():
    logged = msgs(2) + [tool(2, minutes_ago=31), tool(3, minutes_ago=29)] + msgs(1, start=4)
    assert contents(select_history(logged, "t1", False, NOW)) == [
        "m0",
        "m1",
        "list_todo_tasks: r3",
        "m4",
    ]


def test_rendering_marks_sections_and_the_topic_change():
    text = render_history(select_history(msgs(8), "t1", False, NOW), False)
    assert text.index("## Current conversation (most important)") < text.index(
        "## Earlier context (only if relevant)"
    )
    assert "User: m2" in text and "You: m7" in text
    changed = render_history(select_history(msgs(8), "t2", True, NOW), True)
    assert changed.startswith("IMPORTANT: the user has switched topics or corrected you.")
    assert render_history([], False) is None
