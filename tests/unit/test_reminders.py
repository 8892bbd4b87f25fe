"""Reminders: a task's time of day taken once when it comes, and said once in its conversation."""

import asyncio
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from keel.checkpoints.reminders import MOST_TRIES, ReminderStore
from keel.checkpoints.telegram_chats import TelegramChats
from keel.graphs.assembly import open_keel
from keel.graphs.reminding import Delivery
from keel.graphs.settings import Settings
from keel.nodes.remind import message_key
from keel.tools.tasks.store import TaskStore
from tests.conftest import FakeClock
from tests.helpers import invoke, open_database

SUNDAY_10_BERLIN = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)


@pytest.fixture
def sunday() -> FakeClock:
    return FakeClock(SUNDAY_10_BERLIN)


@pytest.fixture
async def db(database_url):
    async with open_database(database_url) as db:
        yield db


@pytest.fixture
async def second_db(database_url, db):
    """The same database as another process opens it (its own connections); in memory, the one."""
    if database_url == "memory":
        yield db
        return
    async with open_database(database_url) as other:
        yield other


def stores(db, clock) -> tuple[TaskStore, ReminderStore]:
    return TaskStore(db, clock).in_zone("Europe/Berlin").about("c-1"), ReminderStore(db, clock)


async def test_a_time_of_day_is_taken_once_when_it_comes(db, sunday):
    tasks, reminders = stores(db, sunday)
    await invoke(tasks, "ann", "create_todo_task", title="check the laundry", due="in 10 minutes")
    await invoke(tasks, "ann", "create_todo_task", title="pay rent", due="friday")  # a day only
    await invoke(tasks, "bob", "create_todo_task", title="call mum", due="in 20 minutes")
    sunday.advance(minutes=9)
    assert await reminders.take_due() == 0
    sunday.advance(minutes=2)
    assert await reminders.take_due() == 1
    assert await reminders.take_due() == 0  # taken once
    leased = await reminders.lease()
    assert [(r.user_id, r.task_id, r.title, r.conversation_id) for r in leased] == [
        ("ann", 1, "check the laundry", "c-1")
    ]
    assert await reminders.lease() == []  # leased to one caller at a time
    assert [r.task_id for r in await reminders.of_user("ann")] == [1]
    assert await reminders.of_user("bob") == []  # bob's time has not come, and ann's is not his
    assert await reminders.get("bob", leased[0].id) is None


async def test_a_task_done_moved_or_made_in_the_past_is_not_reminded_then(db, sunday):
    tasks, reminders = stores(db, sunday)
    for title in ("check the laundry", "water the plants", "call the bank"):
        await invoke(tasks, "ann", "create_todo_task", title=title, due="in 10 minutes")
    await invoke(tasks, "ann", "create_todo_task", title="old one", due="today at 8am")  # past
    await invoke(tasks, "ann", "complete_todo_task", task_id=1)
    await invoke(tasks, "ann", "schedule_todo_task", task_id=2, due="in 2 hours")
    await invoke(tasks, "ann", "delete_todo_task", task_id=3)
    sunday.advance(minutes=30)
    assert await reminders.take_due() == 0
    sunday.advance(hours=2)
    assert await reminders.take_due() == 1
    assert [r.title for r in await reminders.lease()] == ["water the plants"]


async def test_a_repeating_task_is_reminded_at_its_next_time_once_done(db, sunday):
    tasks, reminders = stores(db, sunday)
    await invoke(
        tasks, "ann", "create_todo_task", title="take the bins out", repeat="daily at 11am"
    )
    sunday.advance(hours=1, minutes=1)  # 11:01 in Berlin
    assert await reminders.take_due() == 1
    await invoke(tasks, "ann", "complete_todo_task", task_id=1)  # due tomorrow at 11
    sunday.advance(days=1)
    assert await reminders.take_due() == 1
    assert len({r.remind_at for r in await reminders.lease()}) == 2


async def test_processes_taking_at_once_take_each_reminder_once(db, second_db, sunday):
    tasks, reminders = stores(db, sunday)
    for n in range(40):
        await invoke(tasks, f"u{n % 4}", "create_todo_task", title=f"t{n}", due="in 5 minutes")
    sunday.advance(minutes=6)
    others = [ReminderStore(d, sunday) for d in (db, second_db, db, second_db)]
    taken = await asyncio.gather(*(r.take_due(limit=7) for r in others for _ in range(3)))
    assert sum(taken) == 40
    leased = await asyncio.gather(*(r.lease(limit=9) for r in others for _ in range(3)))
    ids = [r.id for batch in leased for r in batch]
    assert len(ids) == len(set(ids)) == 40


async def test_a_failed_delivery_waits_its_backoff_and_a_busy_one_a_moment(db, sunday):
    tasks, reminders = stores(db, sunday)
    await invoke(tasks, "ann", "create_todo_task", title="check the laundry", due="in 1 minute")
    sunday.advance(minutes=2)
    await reminders.take_due()
    [reminder] = await reminders.lease()
    assert await reminders.failed(reminder, "TelegramDown") == 2.0
    sunday.advance(seconds=1)
    assert await reminders.lease() == []
    sunday.advance(seconds=2)
    [again] = await reminders.lease()
    assert again.attempts == 2
    assert await reminders.failed(again, "TelegramDown") == 5.0
    await reminders.delivered(again)
    sunday.advance(minutes=10)
    assert await reminders.lease() == []


@pytest.fixture
async def keel_on(tmp_path, sunday):
    """keel's parts on SQLite, on the Sunday clock."""
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'keel.db'}", timezone="Europe/Berlin")
    async with open_keel(settings) as keel:
        keel.resources.store = TaskStore(keel.db, sunday)
        keel.resources.reminders = ReminderStore(keel.db, sunday)
        keel.resources.clock = sunday
        yield keel


async def said(keel, cid: str) -> list[str]:
    """What the conversation's ``messages`` say, as its LangGraph clients show it."""
    state = await keel.graph.aget_state({"configurable": {"thread_id": cid}})
    return [m.text for m in state.values.get("messages", [])]


async def test_a_reminder_set_in_words_is_said_once_in_its_conversation(keel_on, sunday):
    keel = keel_on
    cid = (await keel.conversations.create("ann"))["conversation_id"]
    await keel.turns.take(cid, "ann", "add check the laundry in 10 minutes")
    delivery = Delivery(keel.turns, keel.resources.reminders)
    assert await delivery.once() == 0
    sunday.advance(minutes=10, seconds=5)
    assert await delivery.once() == 1
    reminder_line = "⏰ Reminder: check the laundry (task 1)."
    assert (await said(keel, cid))[-1] == reminder_line
    logged = await keel.messages.recent(cid, limit=1)
    assert [(m.role, m.content) for m in logged] == [("assistant", reminder_line)]

    # Delivered again (its process died before marking it): answered, not said twice.
    [reminder] = await keel.resources.reminders.of_user("ann")
    await keel.db.execute(
        "UPDATE keel_reminders SET delivered_at = NULL, outcome = NULL WHERE id = :id",
        {"id": reminder.id},
    )
    sunday.advance(minutes=2)
    assert await delivery.once() == 1
    assert (await said(keel, cid)).count(reminder_line) == 1

    # The next message is a turn like any other, with the reminder in its context.
    result = await keel.turns.take(cid, "ann", "what's on my list?")
    assert "check the laundry" in result.reply


async def test_a_late_reminder_says_when_it_was_for_and_a_done_task_says_nothing(keel_on, sunday):
    keel = keel_on
    cid = (await keel.conversations.create("ann"))["conversation_id"]
    await keel.turns.take(cid, "ann", "add call the plumber at 11am")
    await keel.turns.take(cid, "ann", "add water the plants at 11am")
    await keel.turns.take(cid, "ann", "complete task 2")
    sunday.advance(hours=3)  # keel was down at 11
    delivery = Delivery(keel.turns, keel.resources.reminders, listeners=[])
    outcomes: list[tuple[int, str]] = []
    delivery.listeners.append(lambda r, outcome: outcomes.append((r.task_id, outcome)))
    assert await delivery.once() == 1
    assert outcomes == [(1, "late")]
    line = "⏰ Reminder: call the plumber (task 1), late: it was for 11:00 on Sun 29 Nov 2026."
    assert (await said(keel, cid))[-1] == line


async def test_a_reminder_waits_for_a_turn_in_its_conversation(keel_on, sunday):
    keel = keel_on
    cid = (await keel.conversations.create("ann"))["conversation_id"]
    await keel.turns.take(cid, "ann", "add check the laundry in 10 minutes")
    sunday.advance(minutes=11)
    delivery = Delivery(keel.turns, keel.resources.reminders)
    async with keel.turns.holding(cid, "ann"):  # a person's turn runs
        assert await delivery.once() == 0
    sunday.advance(seconds=3)
    assert await delivery.once() == 1
    assert (await said(keel, cid))[-1].startswith("⏰ Reminder: check the laundry")


async def test_the_remind_command_names_a_reminder_of_the_user(keel_on, sunday):
    keel = keel_on
    cid = (await keel.conversations.create("ann"))["conversation_id"]
    other = (await keel.conversations.create("bob"))["conversation_id"]
    await keel.turns.take(cid, "ann", "add check the laundry in 10 minutes")
    sunday.advance(minutes=11)
    await keel.resources.reminders.take_due()
    [reminder] = await keel.resources.reminders.lease()
    with pytest.raises(Exception, match="names no reminder of this user"):
        await keel.turns.take(
            other, "bob", "", command={"command": "remind", "reminder_id": reminder.id}
        )
    assert not any("laundry" in m for m in await said(keel, other))
    assert message_key(reminder.id) == f"reminder:{reminder.id}"
    assert reminder.remind_at == SUNDAY_10_BERLIN + timedelta(minutes=10)


async def test_a_reminder_is_marked_once_and_given_up_after_its_tries(db, sunday):
    tasks, reminders = stores(db, sunday)
    for title in ("check the laundry", "call the bank"):
        await invoke(tasks, "ann", "create_todo_task", title=title, due="in 1 minute")
    sunday.advance(minutes=2)
    await reminders.take_due()
    first, second = await reminders.lease()
    assert await reminders.delivered(first) is True
    assert await reminders.delivered(first, "dropped") is False  # another process marked it first
    assert [r.outcome for r in await reminders.of_user("ann") if r.id == first.id] == ["delivered"]
    for _ in range(MOST_TRIES + 5):  # waits (a busy conversation, a question) are no tries
        await reminders.failed(second, "conversation busy", retry_in=0)
        [second] = await reminders.lease()
    assert second.attempts == 1  # its first lease only
    given_up = replace(second, attempts=MOST_TRIES)
    assert await reminders.failed(given_up, "TelegramDown") == 0.0
    assert [r.id for r in await reminders.of_user("ann")] == [first.id]  # not shown as said
    sunday.advance(hours=1)
    assert await reminders.lease() == []


async def test_snooze_moves_only_a_reminder_already_said(db, sunday):
    tasks, reminders = stores(db, sunday)
    await invoke(tasks, "ann", "create_todo_task", title="check the laundry", due="in 1 minute")
    later = sunday.now + timedelta(minutes=30)
    assert await reminders.snooze("ann", 1, later) is False  # its own time is still to come
    sunday.advance(minutes=2)
    await reminders.take_due()
    assert await reminders.snooze("bob", 1, later) is False  # not bob's
    assert await reminders.snooze("ann", 1, later) is True
    sunday.advance(minutes=31)
    assert await reminders.take_due() == 1


async def test_a_process_without_the_bot_leaves_telegrams_reminders(db, sunday):
    tasks, reminders = stores(db, sunday)
    await invoke(tasks, "ann", "create_todo_task", title="check the laundry", due="in 1 minute")
    await TelegramChats(db).activate(42, 1001, "c-1")
    sunday.advance(minutes=2)
    await reminders.take_due()
    assert await reminders.lease(telegram=False) == []
    assert [r.title for r in await reminders.lease(telegram=True)] == ["check the laundry"]


async def test_a_task_moved_later_after_its_time_was_taken_is_not_said_then(keel_on, sunday):
    keel = keel_on
    cid = (await keel.conversations.create("ann"))["conversation_id"]
    await keel.turns.take(cid, "ann", "add check the laundry in 10 minutes")
    sunday.advance(minutes=11)
    await keel.resources.reminders.take_due()
    await keel.resources.store.schedule("ann", 1, "tomorrow at 9am")  # moved, before it was said
    outcomes: list[str] = []
    delivery = Delivery(keel.turns, keel.resources.reminders, listeners=[])
    delivery.listeners.append(lambda r, outcome: outcomes.append(outcome))
    assert await delivery.once() == 0
    assert outcomes == ["dropped"]
    assert not any("Reminder" in m for m in await said(keel, cid))


async def test_a_reminder_waits_for_a_question_to_be_answered(keel_on, sunday):
    keel = keel_on
    cid = (await keel.conversations.create("ann"))["conversation_id"]
    await keel.turns.take(cid, "ann", "add check the laundry in 10 minutes")
    await keel.turns.take(cid, "ann", "add old shoes")
    asked = await keel.turns.take(cid, "ann", "delete task 2")
    assert asked.awaiting_confirmation is not None
    sunday.advance(minutes=11)
    delivery = Delivery(keel.turns, keel.resources.reminders)
    assert await delivery.once() == 0  # said now, it would come between question and answer
    answered = await keel.turns.take(cid, "ann", "yes")
    assert "Deleted task 2" in answered.reply
    sunday.advance(seconds=16)
    assert await delivery.once() == 1
    assert (await said(keel, cid))[-1].startswith("⏰ Reminder: check the laundry (task 1), late")
    # A question left unanswered holds a reminder back ten minutes at most.
    porch = keel.resources.store.in_zone("Europe/Berlin").about(cid)
    await porch.create("ann", "switch off the porch light", due="at 11pm")
    await keel.turns.take(cid, "ann", "add new shoes")
    await keel.turns.take(cid, "ann", "delete task 4")
    sunday.set(datetime(2026, 11, 29, 22, 0, 30, tzinfo=UTC))  # 23:00:30 in Berlin
    assert await delivery.once() == 0
    sunday.advance(minutes=10)
    assert await delivery.once() == 1


async def test_a_user_holds_so_many_reminders_to_come_and_is_told_past_that(db, sunday):
    tasks = TaskStore(db, sunday, reminders_max=2).in_zone("Europe/Berlin")
    for title in ("check the laundry", "call the bank"):
        await invoke(tasks, "ann", "create_todo_task", title=title, due="in 1 hour")
    status, said = await invoke(tasks, "ann", "create_todo_task", title="water", due="at 5pm")
    assert status == "error" and "You have 2 reminders to come" in said
    status, _ = await invoke(tasks, "ann", "create_todo_task", title="water", due="tomorrow")
    assert status != "error"  # a day without a time of day is no reminder
    status, _ = await invoke(tasks, "ann", "schedule_todo_task", task_id=1, due="in 2 hours")
    assert status != "error"  # its own reminder moved, not another
    status, _ = await invoke(tasks, "bob", "create_todo_task", title="water", due="at 5pm")
    assert status != "error"  # another user's count
    await invoke(tasks, "ann", "complete_todo_task", task_id=2)
    status, _ = await invoke(tasks, "ann", "create_todo_task", title="water", due="at 5pm")
    assert status != "error"


async def test_done_right_after_a_reminder_completes_its_task_and_only_then(keel_on, sunday):
    keel = keel_on
    cid = (await keel.conversations.create("ann"))["conversation_id"]
    await keel.turns.take(cid, "ann", "add buy milk")
    await keel.turns.take(cid, "ann", "remind me in 10 minutes to check the laundry")
    sunday.advance(minutes=10, seconds=5)
    await Delivery(keel.turns, keel.resources.reminders).once()
    done = await keel.turns.take(cid, "ann", "done")
    assert done.reply == "Completed task: check the laundry"
    again = await keel.turns.take(cid, "ann", "done")  # the last reply is no reminder now
    assert "say which" in again.reply
    assert [t["completed"] for t in await keel.resources.store.list("ann")] == [False, True]
