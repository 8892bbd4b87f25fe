"""The offline understanding learned from data: what people wrote for other assistants, read.

The issue's own examples, the rules that settle the decision table with the learned model
(confident or asking; never a task made from a question), its figures on the held-back lines of
public corpora, and input no pattern was written for.
"""

import time
import uuid

import pytest

from keel.graphs.run_turn import run_turn
from keel.tools.tasks.todo import TODO_TOOLS
from keel.tools.understanding.nlu import Reading, reader_for
from keel.tools.understanding.nlu import settle as settling
from keel.tools.understanding.nlu.data import declared, labelled
from keel.tools.understanding.nlu.scoring import Tally, tallies
from keel.tools.understanding.phrasings import specs_of
from keel.tools.understanding.reading import (
    _settled,
    _understand,
    normalize,
    sure_request,
    understand,
)


def read(text):
    found = understand(text, TODO_TOOLS)
    return [(i.tool, i.ref, i.args) for i in found.intents], found.kind


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("put eggs on my shopping list", "eggs"),
        ("add eggs to my grocery list", "eggs"),
        ("i need a reminder to wash dishes", "wash dishes"),
        ("remind me to call bill tomorrow at 5", "call bill"),
        ("please add milk to the grocery list", "milk"),
        ("i'm out of kleenex so will you put that on my shopping list", "kleenex"),
        ("we're out of milk, put it on the list", "milk"),
    ],
)
def test_titles_are_the_thing_to_do(text, title):
    intents, _ = read(text)
    assert intents and intents[0][0] == "create_todo_task", (text, intents)
    assert intents[0][2]["title"] == title


@pytest.mark.parametrize(
    ("text", "title", "due"),
    [
        ("remind me to call the dentist on friday", "call the dentist", "on friday"),
        ("add pay rent tomorrow at 5pm", "pay rent", "tomorrow at 5pm"),
        ("remind me tomorrow to call mom", "call mom", "tomorrow"),
        ("remind me in 10 minutes to check the laundry", "check the laundry", "in 10 minutes"),
        (
            "i need to renew my passport before december 12",
            "renew my passport",
            "before december 12",
        ),
        ("add finish the report by thursday", "finish the report", "by thursday"),
    ],
)
def test_the_words_of_when_leave_the_title_for_the_due_date(text, title, due):
    intents, _ = read(text)
    assert intents == [("create_todo_task", None, {"title": title, "due": due})], text


@pytest.mark.parametrize(
    ("text", "call"),
    [
        ("what's due today", ("list_todo_tasks", None, {"due": "today"})),
        ("anything due tomorrow", ("list_todo_tasks", None, {"due": "tomorrow"})),
        ("what's due this week", ("list_todo_tasks", None, {"due": "this week"})),
        ("what's overdue", ("list_todo_tasks", None, {"due": "overdue"})),
        ("move task 3 to friday", ("schedule_todo_task", "3", {"due": "friday"})),
        (
            "push the dentist to next monday",
            ("schedule_todo_task", "dentist", {"due": "next monday"}),
        ),
        (
            "add pick up the kids at 3",
            ("create_todo_task", None, {"title": "pick up the kids at 3"}),
        ),
    ],
)
def test_dates_are_asked_about_and_moved_in_words(text, call):
    intents, _ = read(text)
    assert intents == [call], text


def test_a_task_named_inside_carrier_words_is_the_task():
    assert read("remove cereal from my shopping list")[0] == [("delete_todo_task", "cereal", {})]
    assert read("take milk off my grocery list")[0][0][1] == "milk"


@pytest.mark.parametrize(
    "text",
    [
        "tell me what's on my todo list",
        "read my reminder list",
        "what are the things i wanted to remember",
        "check my shopping list",
    ],
)
def test_list_questions_list(text):
    intents, _ = read(text)
    assert [i[0] for i in intents] == ["list_todo_tasks"], (text, intents)


@pytest.mark.parametrize(
    "text",
    [
        "what's the weather like tomorrow",
        "book me a train to leeds",
        "set an alarm for 7 am",
        "set a timer for ten minutes",
        "should i call mom?",
        "what other things do you like to do?",
        "read me my emails",
        "remove my 3pm meeting from the calendar",
    ],
)
def test_no_request_changes_no_task(text):
    intents, kind = read(text)
    changes = [i for i in intents if i[0] != "list_todo_tasks"]
    assert not changes, (text, intents, kind)


async def test_a_request_for_another_assistant_gets_one_honest_sentence(memory_keel):
    result = await run_turn(
        memory_keel.graph, str(uuid.uuid4()), "set an alarm for 7 am", memory_keel.context()
    )
    assert result.reply.startswith("Offline I can only help with your todo list")
    assert await memory_keel.store.list("local") == []


async def test_a_task_is_not_made_of_a_word_for_something_said_before(memory_keel):
    result = await run_turn(memory_keel.graph, str(uuid.uuid4()), "add it", memory_keel.context())
    assert result.reply == 'I can add a task; say which, for example "Add buy milk".'
    assert await memory_keel.store.list("local") == []


async def test_the_issue_examples_in_a_turn(memory_keel):
    for title in ("eggs", "cereal", "milk"):
        await memory_keel.store.create("local", title)
    cid, ctx = str(uuid.uuid4()), memory_keel.context()
    made = await run_turn(memory_keel.graph, cid, "put bread on my shopping list", ctx)
    assert made.reply == "Created task: bread (shopping list)"
    asked = await run_turn(memory_keel.graph, cid, "remove cereal from my shopping list", ctx)
    assert asked.awaiting_confirmation and asked.awaiting_confirmation["task_ids"] == [2]
    await run_turn(memory_keel.graph, cid, "yes", ctx)
    assert [t["title"] for t in await memory_keel.store.list("local")] == ["eggs", "milk", "bread"]


# --- confident or asking -------------------------------------------------------------------------


def reading(label, confidence, runner_up="list_todo_tasks", **args):
    return Reading(label, confidence, runner_up, 1 - confidence, args, familiar=1.0)


class Fixed:
    """A reader that reads every message the same way."""

    def __init__(self, given):
        self.given = given
        self.labels = tuple(t.name for t in TODO_TOOLS)

    def read(self, text):
        return self.given

    def arguments(self, text, label):
        return {}, 0.0


def settled(monkeypatch, text, given):
    monkeypatch.setattr(settling, "reader_for", lambda tools: Fixed(given))
    table = _understand(text, specs_of(TODO_TOOLS))
    return settling.settle(
        normalize(text), table.intents, table.kind, table.detail, declared(TODO_TOOLS)
    )


def test_a_fairly_sure_reading_is_asked_about_not_acted_on(monkeypatch):
    given = reading("create_todo_task", 0.5, title="eggs")
    intents, kind, detail = settled(monkeypatch, "eggs perhaps", given)
    assert intents == () and kind == "unsure"
    assert detail == 'add a task ("eggs") or to list them'


def test_a_sure_reading_is_acted_on(monkeypatch):
    given = reading("create_todo_task", 0.9, title="eggs")
    intents, kind, _ = settled(monkeypatch, "eggs perhaps", given)
    assert [(i.tool, i.args) for i in intents] == [("create_todo_task", {"title": "eggs"})]


def test_a_question_never_makes_or_completes_a_task(monkeypatch):
    for label, args in (
        ("create_todo_task", {"title": "milk"}),
        ("complete_todo_task", {"ref": "milk"}),
    ):
        intents, kind, _ = settled(monkeypatch, "milk perhaps?", reading(label, 0.99, **args))
        assert intents == (), label


def test_a_task_is_never_completed_on_the_models_word_alone(monkeypatch):
    given = reading("complete_todo_task", 0.99, ref="the dentist")
    intents, kind, _ = settled(monkeypatch, "I missed the dentist appointment", given)
    assert intents == () and kind == "unsure"


def test_the_tables_destructive_request_stands_against_an_unsure_model(monkeypatch):
    intents, _, _ = settled(monkeypatch, "delete task 3", reading("offtopic", 0.6))
    assert [(i.tool, i.task_id) for i in intents] == [("delete_todo_task", 3)]


def test_a_sure_word_that_it_is_no_request_stops_the_table(monkeypatch):
    intents, kind, _ = settled(monkeypatch, "check my mail", reading("offtopic", 0.95))
    assert intents == () and kind == "offtopic"


@pytest.mark.parametrize("text", ["set a reminder for me", "add it", "put that on the list"])
def test_missing_words_are_asked_for(monkeypatch, text):
    intents, kind, detail = settled(monkeypatch, text, reading("create_todo_task", 0.9))
    assert intents == () and (kind, detail) == ("missing", "create_todo_task")


def test_a_sure_request_worded_as_a_question_is_asked_about(monkeypatch):
    given = reading("create_todo_task", 0.9, title="cancel gym membership")
    text = "Would you mind adding 'cancel gym membership'?"
    assert settled(monkeypatch, text, given) == (
        (),
        "unsure",
        'add a task ("cancel gym membership") or to list them',
    )


def test_gibberish_is_no_question_about_the_weather():
    assert read("sdlkfj wpeori")[1] == "unknown"


# --- the topic detector consults only sure readings ------------------------------------------


def test_only_a_sure_request_holds_a_topic():
    assert sure_request("add buy milk", TODO_TOOLS)
    assert not sure_request("what other things do you like to do?", TODO_TOOLS)


# --- figures on words someone else wrote --------------------------------------------------------


def test_held_back_public_utterances_are_understood():
    found = tallies([s for s in labelled(TODO_TOOLS) if s.heldout], TODO_TOOLS)
    public = Tally().add_all(t for (data, _), t in found.items() if data in ("clinc150", "slurp"))
    requests = Tally().add_all(
        t for (data, label), t in found.items() if data in ("clinc150", "slurp") and "todo" in label
    )
    assert public.understood / public.total >= 0.9
    assert public.untouched / public.talk >= 0.98
    assert requests.understood / requests.total >= 0.75
    everything = Tally().add_all(found.values())
    assert everything.clean / everything.titled >= 0.85
    blind = Tally().add_all(t for (data, _), t in found.items() if data == "unseen")
    assert blind.understood / blind.total >= 0.88  # written by someone who saw none of the data


# --- input nobody wrote a pattern for -------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "add " + "milk " * 6400,
        "add " + ", ".join(f"item {n}" for n in range(500)),
        "añade 牛乳 🥛 \"unbalanced 'quotes",
        "\U0001f600" * 3000,
    ],
)
def test_odd_input_is_read_in_bounded_time(text):
    started = time.perf_counter()
    understand(text, TODO_TOOLS)
    reader_for(TODO_TOOLS).read(text)
    assert time.perf_counter() - started < 30  # a bound on runaway work, not a speed claim


class Given:
    """A reader that reads each message as the test says (anything else: sure it asks nothing)."""

    def __init__(self, readings):
        self.readings = readings
        self.labels = tuple(t.name for t in TODO_TOOLS)

    def read(self, text):
        return self.readings.get(text, reading("offtopic", 0.99))

    def arguments(self, text, label):
        found = self.read(text)
        return (found.args if found.label == label else {}), 1.0


@pytest.fixture
def given(monkeypatch):
    """Set the learned model's readings of messages for a turn through the graph."""

    def read_as(readings):
        monkeypatch.setattr(settling, "reader_for", lambda tools: Given(readings))

    for cached in (_understand, _settled):
        cached.cache_clear()
    yield read_as
    for cached in (_understand, _settled):
        cached.cache_clear()


@pytest.mark.parametrize(
    ("text", "model"),
    [
        ("the car wash", reading("create_todo_task", 0.6, "offtopic", title="the car wash")),
        ("i need to text joe", reading("offtopic", 0.6)),  # the table's task, which it doubts
    ],
)
async def test_a_yes_to_a_guess_makes_the_task_guessed(memory_keel, given, text, model):
    """The model fairly sure of a task the table does not read, or doubting the table's task."""
    given({text: model})
    title = "the car wash" if text == "the car wash" else "text joe"
    cid, ctx = str(uuid.uuid4()), memory_keel.context()
    asked = await run_turn(memory_keel.graph, cid, text, ctx)
    assert asked.reply == f'Did you mean to add a task ("{title}")?'
    assert await memory_keel.store.list("local") == []
    done = await run_turn(memory_keel.graph, cid, "yes", ctx)
    assert done.reply == f"Created task: {title}"
    again = await run_turn(memory_keel.graph, cid, "yes", ctx)  # nothing asked: nothing made
    assert [t["title"] for t in await memory_keel.store.list("local")] == [title]
    assert not again.reply.startswith("Created")


@pytest.mark.parametrize(
    ("answer", "reply"),
    [
        ("the first", "Created task: eggs"),
        ("add it", "Created task: eggs"),
        ("the second one", "Your tasks:\n- [ ] 1. milk"),
        ("yes", None),  # a yes to two guesses chooses neither
    ],
)
async def test_an_answer_picks_one_of_two_guesses(memory_keel, given, answer, reply):
    given({"shopping list eggs": reading("create_todo_task", 0.5, title="eggs")})
    await memory_keel.store.create("local", "milk")
    cid, ctx = str(uuid.uuid4()), memory_keel.context()
    asked = await run_turn(memory_keel.graph, cid, "shopping list eggs", ctx)
    assert asked.reply == 'Did you mean to add a task ("eggs") or to list them?'
    done = await run_turn(memory_keel.graph, cid, answer, ctx)
    if reply is None:
        assert not done.reply.startswith(("Created", "Your tasks"))
    else:
        assert done.reply == reply
    made = [t["title"] for t in await memory_keel.store.list("local")]
    assert made == (["milk", "eggs"] if reply and reply.startswith("Created") else ["milk"])
