"""What keel must not do with everyday words: complete, create or crash on what nobody asked."""

import uuid

import pytest

from keel.graphs.run_turn import run_turn

TASKS = ["buy milk", "call mom", "dentist appointment", "pay rent", "fix it ticket"]


async def after(keel, text):
    for t in TASKS:
        await keel.store.create("local", t)
    result = await run_turn(keel.graph, str(uuid.uuid4()), text, keel.context())
    tasks = await keel.store.list("local")
    done = [t["title"] for t in tasks if t["completed"]]
    made = [t["title"] for t in tasks if t["title"] not in TASKS]
    return result, done, made


@pytest.mark.parametrize(
    "text",
    [
        "I forgot to call mom",  # the opposite of done
        "did mom call?",  # a question
        "Is the dentist appointment done?",  # a question
        "the milk is done?",  # a question
        "I missed the dentist appointment",
        "I cancelled the dentist appointment",
        "it's done",  # 'it' matches the title 'fix it ticket'
        "did mom call me back",  # a question, though it has no question mark
        "did i pay too much rent last month",
        "I enjoyed calling mom, bye",  # a goodbye
    ],
)
async def test_nothing_is_completed(memory_keel, text):
    _, done, _ = await after(memory_keel, text)
    assert done == [], f"{text!r} completed {done}"


@pytest.mark.parametrize(
    "text",
    [
        "I need to see my list",
        "I have to know how many tasks I have",
        "I have to go now, thanks",
        "I have to say, this app is great",
        "I should call mom, shouldn't I?",  # makes a task "shouldn't I"
        "have to go, bye",  # makes "go" and "bye"
        "I need to delete the milk one",  # makes a task "delete the milk one"
        "new topic: the garden",  # made a task "the garden"
        "ok so, switching topics: my vacation",
        "back to the groceries",
        "new topic",  # asked what to add
    ],
)
async def test_nothing_is_created(memory_keel, text):
    _, _, made = await after(memory_keel, text)
    assert made == [], f"{text!r} created {made}"


@pytest.mark.parametrize(
    ("text", "reply"),
    [
        ("new topic: the garden", "Sure, the garden. "),
        ("new topic", "Sure. "),
    ],
)
async def test_a_topic_phrase_names_the_topic_and_asks_what_to_do(memory_keel, text, reply):
    result, _, _ = await after(memory_keel, text)
    assert result.reply == reply + "What would you like to do about it on your list?"


async def test_what_follows_a_topic_phrase_is_read_as_the_request(memory_keel):
    _, _, made = await after(memory_keel, "ok so, new topic: add buy seeds")
    assert made == ["buy seeds"]


@pytest.mark.parametrize(
    "text",
    ["add " + "1" * 5000 + " done", "show " + "1" * 5000, "what is task " + "1" * 5000],
)
async def test_a_long_number_does_not_crash_the_turn(memory_keel, text):
    """Intent.task_id: int() of > 4300 digits raises ValueError (new for these shapes)."""
    result, _, _ = await after(memory_keel, text)
    assert result.reply


async def test_a_long_description_is_looked_up_once(memory_keel):
    """find_todo_tasks cuts descriptions to 200 chars; decide() looks the full one up and never
    finds it back, so it looks up again until the loop limit."""
    text = "delete the " + "very " * 45 + "important one"
    result, _, _ = await after(memory_keel, text)
    assert "stopped after" not in result.reply, result.reply


async def test_a_message_of_topic_phrases_alone_is_read_without_end(memory_keel):
    result, _, made = await after(memory_keel, "back to " * 2000)
    assert made == [] and result.reply.startswith("Sure.")
