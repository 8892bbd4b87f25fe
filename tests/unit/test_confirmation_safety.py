"""Confirmations that cannot be slipped past: missing tasks, tasks never named, new requests."""

import uuid

import pytest


async def titles(keel):
    return [(t["id"], t["title"], t["completed"]) for t in await keel.store.list("local")]


async def seed(keel, *names):
    for name in names:
        await keel.store.create("local", name)


async def test_a_missing_task_before_a_present_one_never_asks_and_crashes_the_turn(memory_keel):
    """Task 1 was deleted earlier; 'delete 1 and 2' should ask about 2 (or report 1 missing)."""
    await seed(memory_keel, "gone", "buy milk", "call mom")
    await memory_keel.store.delete("local", 1)
    cid = str(uuid.uuid4())
    result = await memory_keel.say(cid, "delete tasks 1 and 2")  # RuntimeError: 50 stops
    assert result.awaiting_confirmation is not None
    assert result.awaiting_confirmation["task_ids"] == [2]


@pytest.mark.parametrize(
    "answer",
    [
        "delete task 3, yes I'm sure",  # a new, explicit request for ANOTHER task
        "please delete task 3 instead",  # 'please' counts as yes
        "ok, delete task 3 instead",
        "sure, but delete task 3 instead",
    ],
)
async def test_a_new_request_naming_another_task_deletes_the_pending_one(memory_keel, answer):
    await seed(memory_keel, "buy milk", "call mom", "old junk")
    cid = str(uuid.uuid4())
    asked = await memory_keel.say(cid, "delete task 2")
    assert asked.awaiting_confirmation["task_ids"] == [2]
    await memory_keel.say(cid, answer)
    remaining = [t[1] for t in await titles(memory_keel)]
    assert "call mom" in remaining, f"{answer!r} deleted task 2, which the user moved away from"


@pytest.mark.parametrize("answer", ["no worries, keep it", "no worries, don't delete it"])
async def test_a_polite_no_deletes(memory_keel, answer):
    await seed(memory_keel, "buy milk")
    cid = str(uuid.uuid4())
    await memory_keel.say(cid, "delete task 1")
    await memory_keel.say(cid, answer)
    assert await titles(memory_keel) == [(1, "buy milk", False)]


async def test_it_means_the_task_just_shown_not_a_title_holding_the_word_it(memory_keel):
    await seed(memory_keel, "buy milk", "call mom", "fix IT ticket")
    cid = str(uuid.uuid4())
    shown = await memory_keel.say(cid, "show task 2")
    assert "call mom" in shown.reply
    await memory_keel.say(cid, "mark it as done")
    done = [t[1] for t in await titles(memory_keel) if t[2]]
    assert done in ([], ["call mom"]), f"completed {done}"


@pytest.mark.parametrize("answer", ["yes", "no", "add eggs"])
async def test_a_present_task_then_a_missing_one_the_answer_is_never_taken(memory_keel, answer):
    """'delete task 2 and task 9' (no task 9): every answer re-asks the same question, for ever."""
    await seed(memory_keel, "buy milk", "call mom")
    cid = str(uuid.uuid4())
    asked = await memory_keel.say(cid, "delete task 2 and task 9")
    assert (
        asked.reply == "Are you sure you want to delete task 2? (yes/no)\nDelete task 2 - call mom"
    )
    replies = [(await memory_keel.say(cid, answer)).reply for _ in range(3)]
    assert replies[0] != asked.reply, replies  # the answer was taken


async def test_command_resume_yes_deletes_a_task_the_question_never_named(memory_keel):
    """Like a LangGraph SDK/Studio client: the yes comes as Command(resume=...)."""
    from langgraph.types import Command

    from keel.graphs.runner import thread_config

    await seed(memory_keel, "buy milk", "call mom", "pay rent")
    cid, context = str(uuid.uuid4()), memory_keel.context()
    config = thread_config(cid)
    await memory_keel.graph.ainvoke(
        {"content": "delete task 2 and task 4"}, config, context=context
    )
    (asked,) = (await memory_keel.graph.aget_state(config)).interrupts
    assert asked.value["question"] == (
        "Are you sure you want to delete task 2? (yes/no)\nDelete task 2 - call mom"
    )
    await memory_keel.store.create("local", "new important task")  # task 4, made elsewhere
    await memory_keel.graph.ainvoke(Command(resume="yes"), config, context=context)
    assert "new important task" in [t[1] for t in await titles(memory_keel)]
