"""When a task is due: read from words in the user's time zone, stored, listed and moved."""

import json
import uuid
from datetime import UTC, date, datetime

import pytest

from keel.checkpoints.times import (
    FieldError,
    When,
    due_days,
    next_time,
    read_due,
    read_repeat,
    zone_named,
    zone_ready,
)
from keel.graphs.resources import prepared
from keel.tools.calls import run_tool_call
from keel.tools.spec import spec_of
from keel.tools.tasks.pages import describe_page, task_line
from keel.tools.tasks.store import TaskError, TaskStore
from keel.tools.tasks.todo import TODO_TOOLS
from keel.tools.understanding.reading import understand
from tests.conftest import FakeClock
from tests.helpers import invoke, open_database

SUNDAY_10_BERLIN = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)
"""Sunday 29 November 2026, 10:00 in Berlin (UTC+1)."""


@pytest.fixture
def sunday() -> FakeClock:
    return FakeClock(SUNDAY_10_BERLIN)


@pytest.fixture
async def store(database_url, sunday):
    async with open_database(database_url) as db:
        yield TaskStore(db, sunday).in_zone("Europe/Berlin")


@pytest.mark.parametrize(
    ("words", "due"),
    [
        ("friday", "2026-12-04"),
        ("on friday", "2026-12-04"),
        ("by friday", "2026-12-04"),
        ("due friday", "2026-12-04"),
        ("tomorrow at 5pm", "2026-11-30T17:00+01:00"),
        ("in 45 minutes", "2026-11-29T10:45+01:00"),
        ("tonight", "2026-11-29T20:00+01:00"),
        ("dec 3", "2026-12-03"),
        ("2026-12-04T17:00", "2026-12-04T17:00+01:00"),
        # an hour said alone is a time of day, 1 to 7 in the afternoon; a day alone, this month's
        ("friday at 10", "2026-12-04T10:00+01:00"),
        ("at 10 on friday", "2026-12-04T10:00+01:00"),
        ("tomorrow at 9", "2026-11-30T09:00+01:00"),
        ("at 5", "2026-11-29T17:00+01:00"),
        ("tomorrow at 6 o'clock", "2026-11-30T18:00+01:00"),
        ("on the 10th", "2026-12-10"),
        ("the 30th at 8", "2026-11-30T08:00+01:00"),
        ("on the 31st", "2026-12-31"),
        ("in 30 seconds", "2026-11-29T10:00+01:00"),
        ("at 6 in the morning", "2026-11-30T06:00+01:00"),
        ("at 3 in the afternoon", "2026-11-29T15:00+01:00"),
        ("at 11 tonight", "2026-11-29T23:00+01:00"),
        ("tomorrow morning at 7", "2026-11-30T07:00+01:00"),
        ("due at 5", "2026-11-29T17:00+01:00"),
        ("@ 6", "2026-11-29T18:00+01:00"),
        ("on the 10th of next month", "2026-12-10"),
        ("at 12 at night", "2026-11-30T00:00+01:00"),
        ("at 8 this evening", "2026-11-29T20:00+01:00"),
    ],
)
async def test_a_due_date_is_read_from_words_in_the_users_zone(store, words, due):
    status, task = await invoke(
        store, "ann", "create_todo_task", title="call the dentist", due=words
    )
    assert status == "success", task
    assert task["title"] == "call the dentist"
    assert task["due"] == due and task["overdue"] is False


async def test_the_same_words_are_another_moment_in_another_zone(store):
    _, berlin = await invoke(store, "ann", "create_todo_task", title="a", due="tomorrow at 9am")
    _, tokyo = await invoke(
        store.in_zone("Asia/Tokyo"), "ann", "create_todo_task", title="b", due="tomorrow at 9am"
    )
    assert berlin["due"] == "2026-11-30T09:00+01:00"
    assert tokyo["due"] == "2026-11-30T09:00+09:00"
    again = await store.in_zone("Asia/Tokyo").get("ann", berlin["id"])
    assert again["due"] == "2026-11-30T17:00+09:00"  # the same moment, shown where the user is


@pytest.mark.parametrize(
    ("words", "question"),
    [
        ("blue moon", "Which day do you mean by “blue moon”?"),
        ("yesterday", "“yesterday” is Sat 28 Nov 2026, which has passed. When should it be due?"),
        ("an hour ago", "which has passed"),
    ],
)
async def test_words_that_name_no_time_to_come_are_asked_about_and_nothing_is_stored(
    store, words, question
):
    status, content = await invoke(store, "ann", "create_todo_task", title="x", due=words)
    assert status == "error" and question in content
    assert await store.count("ann") == 0


async def test_a_task_line_shows_when_it_is_due_and_when_it_is_late(store, sunday):
    await invoke(store, "ann", "create_todo_task", title="call the dentist", due="friday")
    await invoke(store, "ann", "create_todo_task", title="pay rent", due="tomorrow at 5pm")
    await invoke(store, "ann", "create_todo_task", title="buy milk")
    msg = await run_tool_call(
        {"name": "list_todo_tasks", "args": {}, "id": "call_1", "type": "tool_call"},
        "ann",
        store,
        tools=TODO_TOOLS,
    )
    page = json.loads(msg.content)
    lines = [t["title"] for t in page["tasks"]]
    assert lines == ["call the dentist", "pay rent", "buy milk"]
    shown = describe_page(page)
    assert "- [ ] 1. call the dentist (due Fri 4 Dec 2026)" in shown
    assert "- [ ] 2. pay rent (due Mon 30 Nov 2026 17:00)" in shown
    assert "- [ ] 3. buy milk\n" in shown + "\n"
    sunday.advance(days=2)
    late = describe_page((await invoke(store, "ann", "list_todo_tasks"))[1])
    assert "- [ ] 2. pay rent (overdue since Mon 30 Nov 2026 17:00)" in late


async def test_the_list_reads_what_is_due_when(store, sunday):
    for title, due in [
        ("today", "today at 6pm"),
        ("tomorrow", "tomorrow"),
        ("friday", "friday"),
        ("next month", "dec 15"),
        ("undated", None),
    ]:
        await invoke(store, "ann", "create_todo_task", title=title, due=due)

    async def titles(due):
        status, page = await invoke(store, "ann", "list_todo_tasks", due=due)
        assert status == "success", page
        return [t["title"] for t in page["tasks"]], page["total"]

    assert await titles("today") == (["today"], 1)
    assert await titles("tomorrow") == (["tomorrow"], 1)
    assert await titles("this week") == (["today", "tomorrow", "friday"], 3)
    assert await titles("friday") == (["friday"], 1)
    assert await titles("december") == (["friday", "next month"], 2)
    assert await titles("overdue") == ([], 0)
    sunday.advance(days=1)  # Monday 10:00: "today at 6pm" was yesterday
    assert await titles("overdue") == (["today"], 1)
    await invoke(store, "ann", "complete_todo_task", task_id=1)
    assert await titles("late") == ([], 0)  # a done task is never late
    status, content = await invoke(store, "ann", "list_todo_tasks", due="blue moon")
    assert status == "error" and "Which day do you mean" in content


async def test_moving_a_task_to_another_day_and_taking_its_date_away(store):
    _, task = await invoke(store, "ann", "create_todo_task", title="dentist", due="friday")
    status, moved = await invoke(
        store, "ann", "schedule_todo_task", task_id=task["id"], due="monday 9am"
    )
    assert status == "success" and moved["due"] == "2026-11-30T09:00+01:00"
    _, cleared = await invoke(store, "ann", "schedule_todo_task", task_id=task["id"], due="")
    assert cleared["due"] is None
    status, content = await invoke(
        store, "bob", "schedule_todo_task", task_id=task["id"], due="friday"
    )
    assert status == "error" and content == f"Error: Task {task['id']} not found."


def test_a_changed_date_asks_first_as_a_rename_does():
    schedule = next(t for t in TODO_TOOLS if t.name == "schedule_todo_task")
    confirm = spec_of(schedule).confirm
    assert confirm is not None
    change = confirm.change({"task_id": 2, "due": "friday"}, {"title": "dentist"})
    assert change["text"] == "Reschedule task 2: dentist -> friday"


def test_the_days_a_filter_names():
    when = When(zone_named("Europe/Berlin"), SUNDAY_10_BERLIN)
    assert [d.isoformat() for d in due_days("this week", when)] == ["2026-11-29", "2026-12-06"]
    assert [d.isoformat() for d in due_days("tomorrow", when)] == ["2026-11-30", "2026-12-01"]
    assert due_days("overdue", when) is None
    assert read_due("", when) == {"due_date": None, "due_at": None}


async def test_an_unknown_time_zone_is_refused(store):
    with pytest.raises(TaskError, match="not a time zone"):
        store.in_zone("Mars/Olympus")


async def test_a_zone_a_run_context_names_is_read_off_the_event_loop_or_refused(memory_keel):
    ready = await prepared(memory_keel.context(timezone="Pacific/Chatham"))
    assert zone_ready("Pacific/Chatham") and ready.store.zone == zone_named("Pacific/Chatham")
    with pytest.raises(FieldError, match="not a time zone I know"):
        await prepared(memory_keel.context(timezone="Mars/Olympus"))


def test_a_time_of_day_keeps_its_hour_across_a_change_of_summer_time():
    berlin = zone_named("Europe/Berlin")
    before_spring = When(berlin, datetime(2026, 3, 28, 12, 0, tzinfo=UTC))  # CET, +1
    assert read_due("tomorrow at 5pm", before_spring)["due_at"] == datetime(
        2026, 3, 29, 15, 0, tzinfo=UTC
    )  # 17:00 CEST, +2
    night_of_autumn = When(berlin, datetime(2026, 10, 24, 23, 30, tzinfo=UTC))  # 01:30 CEST
    assert read_due("at 2:30am", night_of_autumn)["due_date"] == "2026-10-25"  # no crash
    with pytest.raises(FieldError, match="too far off"):
        read_due("31 december 9999 23:59", When(berlin, SUNDAY_10_BERLIN))


async def test_a_moment_is_counted_on_the_day_it_falls_on_where_the_reader_is(store):
    await invoke(store, "ann", "create_todo_task", title="late call", due="tomorrow at 00:30")
    utc = store.in_zone("UTC")  # 23:30 today in UTC
    assert (await invoke(utc, "ann", "list_todo_tasks", due="today"))[1]["total"] == 1
    assert (await invoke(store, "ann", "list_todo_tasks", due="today"))[1]["total"] == 0
    await invoke(store, "ann", "complete_todo_task", task_id=1)
    done = await invoke(store, "ann", "list_todo_tasks", due="tomorrow", status="done")
    assert [t["title"] for t in done[1]["tasks"]] == ["late call"]  # done ones, when asked for


def test_taking_a_date_away_says_so_in_the_question():
    confirm = spec_of(next(t for t in TODO_TOOLS if t.name == "schedule_todo_task")).confirm
    assert confirm is not None
    assert confirm.change({"task_id": 2, "due": ""}, {"title": "dentist"})["text"] == (
        "Reschedule task 2: dentist -> no date"
    )


def test_how_often_a_task_repeats_is_read_and_its_next_time_found():
    when = When(zone_named("Europe/Berlin"), SUNDAY_10_BERLIN)
    weekly = read_repeat("every monday", when)
    assert weekly == {
        "repeat_rule": "BYDAY=MO;INTERVAL=1;FREQ=WEEKLY",
        "repeat_words": "every monday",
    }
    assert next_time(weekly["repeat_rule"], when.now, when.zone) == (date(2026, 11, 30), None)
    timed = read_repeat("every tuesday at 5pm", when)["repeat_rule"]
    assert next_time(timed, when.now, when.zone) == (
        date(2026, 12, 1),
        datetime(2026, 12, 1, 16, 0, tzinfo=UTC),
    )
    assert read_repeat("", when) == {"repeat_rule": None, "repeat_words": None}
    with pytest.raises(FieldError, match="How often do you mean"):
        read_repeat("blue moon", when)


async def test_a_repeating_task_is_due_at_its_first_time_and_moves_on_when_done(store, sunday):
    status, task = await invoke(
        store, "ann", "create_todo_task", title="take out the bins", repeat="every monday"
    )
    assert status == "success"
    assert (task["due"], task["repeat"]) == ("2026-11-30", "every monday")
    assert (
        task_line(task) == "- [ ] 1. take out the bins (due Mon 30 Nov 2026; repeats every monday)"
    )
    _, done = await invoke(store, "ann", "complete_todo_task", task_id=task["id"])
    assert (done["completed"], done["due"]) == (False, "2026-12-07")  # next monday, still open
    sunday.advance(days=20)  # Saturday 19 December: two mondays missed
    _, late = await invoke(store, "ann", "complete_todo_task", task_id=task["id"])
    assert late["due"] == "2026-12-21"  # the next one to come, not the ones missed
    status, error = await invoke(store, "ann", "create_todo_task", title="x", repeat="blue moon")
    assert status == "error" and "How often do you mean" in error


def test_how_often_is_understood_offline_and_leaves_the_title():
    (read,) = understand("remind me to take out the bins every monday", TODO_TOOLS).intents
    assert read.args == {"title": "take out the bins", "repeat": "every monday"}


async def test_a_repeating_task_done_in_a_turn_says_when_it_comes_back(memory_keel):
    cid = str(uuid.uuid4())
    made = await memory_keel.say(cid, "remind me to take out the bins every monday")
    assert made.reply.startswith("Created task: take out the bins (due ")
    assert made.reply.endswith("; repeats every monday)")
    done = await memory_keel.say(cid, "done with the bins")
    assert done.reply.startswith("Completed task: take out the bins (due ")
    (task,) = await memory_keel.store.list("local")
    assert not task["completed"] and task["repeat"] == "every monday"


async def test_a_task_is_made_to_repeat_and_stopped(store):
    await invoke(store, "ann", "create_todo_task", title="call mom")
    await invoke(store, "ann", "create_todo_task", title="pay rent", due="friday")
    _, weekly = await invoke(store, "ann", "repeat_todo_task", task_id=1, repeat="every sunday")
    assert (weekly["due"], weekly["repeat"]) == ("2026-11-29", "every sunday")  # no date: today
    _, monthly = await invoke(store, "ann", "repeat_todo_task", task_id=2, repeat="every month")
    assert (monthly["due"], monthly["repeat"]) == ("2026-12-04", "every month")  # its date kept
    _, mondays = await invoke(store, "ann", "repeat_todo_task", task_id=2, repeat="every monday")
    assert mondays["due"] == "2026-12-07"  # the first monday on or after its friday
    _, stopped = await invoke(store, "ann", "repeat_todo_task", task_id=1)
    assert (stopped["due"], stopped.get("repeat")) == ("2026-11-29", None)
    _, done = await invoke(store, "ann", "complete_todo_task", task_id=1)
    assert done["completed"]  # it stays done: it no longer comes back
    status, error = await invoke(store, "bob", "repeat_todo_task", task_id=2, repeat="daily")
    assert status == "error" and error == "Error: Task 2 not found."


@pytest.mark.parametrize(
    ("message", "repeat"),
    [
        ("make call mom repeat every sunday", "every sunday"),
        ("call mom should repeat every other week", "every other week"),
        ("stop repeating call mom", None),
        ("call mom doesn't repeat anymore", None),
    ],
)
def test_changing_or_stopping_a_repeat_is_understood_offline(message, repeat):
    (read,) = understand(message, TODO_TOOLS).intents
    assert read.tool == "repeat_todo_task" and read.ref == "call mom"
    assert read.args.get("repeat") == repeat


async def test_a_repeat_changed_in_a_turn_says_so(memory_keel):
    await memory_keel.store.create("local", "call mom")
    cid = str(uuid.uuid4())
    made = await memory_keel.say(cid, "make call mom repeat every sunday")
    assert made.reply.startswith("Task 1 repeats: call mom (due ")
    assert made.reply.endswith("; repeats every sunday)")
    stopped = await memory_keel.say(cid, "stop repeating call mom")
    assert stopped.reply.startswith("Task 1 no longer repeats: call mom (due ")
