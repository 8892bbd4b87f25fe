"""The offline model in whole turns: everyday words, tasks by what they are, lists, small talk."""

import uuid

import pytest

from keel.graphs.run_turn import run_turn


async def say(keel, cid, text):
    return await run_turn(keel.graph, cid, text, keel.context())


async def titles(keel):
    return [(t["title"], t["completed"]) for t in await keel.store.list("local")]


async def seed(keel, *names):
    for name in names:
        await keel.store.create("local", name)


@pytest.mark.parametrize(
    "message,made",
    [
        ("Put eggs on my list please", ["eggs"]),
        ("I need to remember to water the plants", ["water the plants"]),
        ("todo: book dentist", ["book dentist"]),
        ("can you add 'renew passport' for me", ["renew passport"]),
        ("add milk, bread and butter", ["milk", "bread", "butter"]),
        ("Add bread and butter", ["bread and butter"]),
        ("don't let me forget to feed the cat 🙏", ["feed the cat"]),
    ],
)
async def test_adding_in_ordinary_words(keel, message, made):
    await say(keel, str(uuid.uuid4()), message)
    assert await titles(keel) == [(t, False) for t in made]


async def test_a_task_named_by_what_it_is(keel):
    await seed(keel, "buy milk", "call mom", "book the dentist")
    done = await say(keel, str(uuid.uuid4()), "mark the milk one as done")
    assert done.reply == "Completed task: buy milk"
    told = await say(keel, str(uuid.uuid4()), "I called mom")
    assert told.reply == "Completed task: call mom"
    cid = str(uuid.uuid4())
    asked = await say(keel, cid, "delete the dentist one")
    assert asked.awaiting_confirmation["task_ids"] == [3]


async def test_several_close_matches_are_asked_about_and_the_pick_is_taken(keel):
    await seed(keel, "buy milk", "milk the cow", "walk dog")
    cid = str(uuid.uuid4())
    which = await say(keel, cid, "complete the milk one")
    assert which.reply.startswith('Several tasks match "milk": 1. buy milk, 2. milk the cow.')
    assert which.complete and await titles(keel) == [
        ("buy milk", False), ("milk the cow", False), ("walk dog", False)
    ]  # fmt: skip
    picked = await say(keel, cid, "the second one")
    assert picked.reply == "Completed task: milk the cow"


async def test_no_match_says_so_and_names_the_closest(keel):
    await seed(keel, "buy milk", "call grandma")
    result = await say(keel, str(uuid.uuid4()), "delete buy bananas")
    assert result.reply == (
        'I couldn\'t find a task matching "buy bananas". The closest is task 1: buy milk.'
    )
    assert result.awaiting_confirmation is None and len(await titles(keel)) == 2


async def test_a_remark_beside_a_request_searches_for_nothing(keel):
    await seed(keel, "rice", "bread", "call grandma")
    cid = str(uuid.uuid4())
    rice = await say(keel, cid, "scratch the rice, we still have some")
    assert rice.awaiting_confirmation["task_ids"] == [1]
    assert (await say(keel, cid, "yes")).reply == "Deleted task 1: rice"
    bread = await say(keel, cid, "remove the bread, I've got two loaves")
    assert bread.awaiting_confirmation["task_ids"] == [2]
    assert (await say(keel, cid, "yes")).reply == "Deleted task 2: bread"
    alone = await say(keel, cid, "I've got two loaves")  # a report alone still says it found none
    assert alone.reply.startswith('I couldn\'t find a task matching "got two loaves".')
    near = await say(keel, cid, "complete task 9, I rang grandma")  # a near one is named
    assert "The closest is task 3: call grandma." in near.reply


async def test_questions_about_the_list(keel):
    await seed(keel, "buy milk", "call mom", "book dentist")
    await keel.store.complete("local", 2)
    cid = str(uuid.uuid4())
    assert (await say(keel, cid, "how many tasks do I have?")).reply == (
        "You have 3 tasks: 2 open, 1 done."
    )
    left = (await say(keel, cid, "what's left?")).reply
    assert "buy milk" in left and "call mom" not in left
    assert (await say(keel, cid, "what's task 3?")).reply == "Task 3: book dentist (open)"
    found = (await say(keel, cid, "anything about the dentist?")).reply
    assert "- [ ] 3. book dentist" in found


async def test_whole_list_requests_ask_once(keel):
    await seed(keel, "a", "b", "c")
    await keel.store.complete("local", 1)
    cid = str(uuid.uuid4())
    asked = await say(keel, cid, "clear the completed ones")
    assert asked.reply == (
        "Are you sure you want to delete task 1? (yes/no)\nDelete task 1 - a (done)"
    )
    await say(keel, cid, "ok do it")
    done = await say(keel, str(uuid.uuid4()), "complete everything")
    assert done.reply == "Completed task: b\nCompleted task: c"
    assert await titles(keel) == [("b", True), ("c", True)]


@pytest.mark.parametrize(
    "message,starts",
    [
        ("thanks!", "You're welcome!"),
        ("hi there", "Hi!"),
        ("bye", "Bye!"),
        ("what can you do?", "I can help with your todo list"),
        ("tell me a joke", "Offline I can only help with your todo list"),
        ("dleete task 2", "Are you sure you want to delete task 2?"),
        ("frobnicate the widgets", "Sorry, I didn't get that."),
    ],
)
async def test_a_conversation_not_a_command_syntax(keel, message, starts):
    await seed(keel, "x", "y")
    result = await say(keel, str(uuid.uuid4()), message)
    assert result.reply.startswith(starts)


async def test_the_plan_has_one_step_per_request(keel):
    result = await say(keel, str(uuid.uuid4()), "add eggs, bread and butter")
    assert [i["tool"] for i in result.todolist["items"]] == ["create_todo_task"] * 3
    assert result.complete


async def test_a_whole_list_request_acts_on_a_page_and_says_what_is_left(memory_keel):
    for n in range(150):
        await memory_keel.store.create("local", f"chore {n}")
    cid = str(uuid.uuid4())
    first = await say(memory_keel, cid, "complete everything")
    lines = first.reply.splitlines()
    assert lines[0] == "Completed task: chore 0" and lines[10] == "... and 90 more like these."
    assert lines[-1] == "That was the first 100 of 150; ask again for the rest."
    assert await memory_keel.store.count("local", done=True) == 100
    rest = await say(memory_keel, cid, "complete everything")
    assert rest.reply.splitlines()[-1] == "Completed task: chore 149"
    assert await memory_keel.store.count("local", done=False) == 0
    asked = await say(memory_keel, cid, "delete all my tasks")
    assert asked.awaiting_confirmation["prompt"] == (
        "Are you sure you want to delete 100 tasks? (yes/no)"
    )


async def test_it_is_the_task_just_talked_about(keel):
    await seed(keel, "buy milk", "call mom", "fix it ticket")
    cid = str(uuid.uuid4())
    await say(keel, cid, "show task 2")
    done = await say(keel, cid, "mark it as done")
    assert done.reply == "Completed task: call mom"
    made = await say(keel, str(uuid.uuid4()), "add feed the cat and then mark it done")
    assert made.reply == "Created task: feed the cat\nCompleted task: feed the cat"
    unclear = await say(keel, str(uuid.uuid4()), "delete it")
    assert unclear.reply == 'Which task do you mean by "it"? Say its number.'
    assert unclear.awaiting_confirmation is None
    assert [t["title"] for t in await keel.store.list("local")][2] == "fix it ticket"
