"""Hostile and odd input: parsing stays linear, "yes" means one thing, nothing typed is lost."""

import time
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keel.nodes.models.markers import DEFAULT_DONE_MARKER, has_done, lines
from keel.tools.tasks.rows import MAX_TASK_ID, TaskError
from keel.tools.tasks.todo import TODO_TOOLS
from keel.tools.understanding.reading import _understand, confirms, parse_intents
from keel.tools.yes_no import STRICT_YES, YES_WORDS, is_yes
from tests.helpers import strip_done

LIMIT = 32_000


def parse_seconds(message: str) -> float:
    _understand.cache_clear()  # a turn keeps its last parses: time the parse itself
    start = time.perf_counter()
    parse_intents(message, TODO_TOOLS)
    confirms(message)
    strip_done(message)
    return time.perf_counter() - start


WORST = {
    "spaces between two words": "a" + " " * (LIMIT - 2) + "b",
    "add, spaces, broken lines": "add" + " " * (LIMIT - 7) + "\nx\ny",
    "delete task, spaces": "delete task" + " " * (LIMIT - 11),
    "yes, spaces, no": "yes" + " " * (LIMIT - 4) + "x",
    "punctuation runs": "delete task 1, " + ". " * ((LIMIT - 16) // 2) + "x",
    "tabs and newlines": "add " + "\t\n" * ((LIMIT - 5) // 2) + "x",
    "words that end a task, repeated": "mark x" + " as well" * 3_990 + " y",
    "'now' runs": "delete " + "now " * 7_990 + "x",
    "'too' runs": "delete x" + " too" * 7_990 + " y",
    "quoted items": "add " + "'a', " * 6_390,
    "a run of dashes": "x" + "-" * (LIMIT - 2),
    "greetings and commas": "hello, " * 4_500,
    "a long number": "show " + "1" * (LIMIT - 6),
    "sentences": "no. " * 7_990,
}


@pytest.mark.parametrize("name", WORST)
def test_parsing_the_worst_inputs_is_linear(name):
    message = WORST[name]
    assert len(message) <= LIMIT
    plain = ("Add buy milk and bread " * (LIMIT // 23))[:LIMIT]
    baseline = min(parse_seconds(plain) for _ in range(3))
    worst = min(parse_seconds(message) for _ in range(3))
    # generous: the same order as a plain message of the same length, nowhere near quadratic
    # (quadratic backtracking took seconds at 4,000 characters)
    assert worst < 20 * baseline + 0.05, (worst, baseline)


@pytest.mark.parametrize(
    "message,task_id",
    [("Delete task 415, ...", 415), ("Delete task 416; !", 416), ("Delete task 417 and .", 417)],
)
def test_punctuation_is_not_a_yes(message, task_id):
    assert confirms(message) is False
    [intent] = parse_intents(message, TODO_TOOLS)
    assert intent.tool == "delete_todo_task" and intent.task_id == task_id


@pytest.mark.parametrize("word", sorted(STRICT_YES))
def test_a_yes_inside_a_request_is_a_yes_as_an_answer(word):
    assert confirms(f"delete task 3, {word}")
    assert is_yes(word) and is_yes(word.upper()) and is_yes(f"{word}!")


@pytest.mark.parametrize("word", sorted(YES_WORDS))
def test_every_yes_word_answers_yes(word):
    assert is_yes(word) and is_yes(word.upper()) and is_yes(f"{word}!")


@pytest.mark.parametrize("word", ["ok", "please", "right", "go", "sure thing"])
def test_a_loose_yes_inside_a_request_still_asks(word):
    assert not confirms(f"delete task 3, {word}")


@pytest.mark.parametrize("answer", ["no", "nope", "yesterday", "", "...", "maybe yes"])
def test_what_is_not_a_yes(answer):
    assert not is_yes(answer)


def test_only_real_line_ends_split_a_reply():
    for sep in ("\u2028", "\u2029", "\u0085", "\x0b", "\x0c", "\x1c"):
        reply = f"KEEL DONE: b{sep}Created task: a"  # one line: the marker's, to its end
        assert lines(reply) == [reply] and has_done(reply)
    assert has_done("Added it. KEEL DONE: added") and not has_done("Added it, KEEL DONE.")
    assert strip_done("Created task: a\r\nKEEL DONE: b") == "Created task: a"
    assert lines("a\rb\nc\r\nd") == ["a", "b", "c", "d"]


async def test_out_of_range_task_ids_are_no_such_task(memory_keel):
    for bad in (MAX_TASK_ID + 1, 10**20):
        with pytest.raises(TaskError) as err:
            await memory_keel.store.get("local", bad)
        assert err.value.code == "not_found"


async def test_a_huge_task_id_in_a_message_answers_and_spoils_nothing(memory_keel):
    from keel.graphs.run_turn import run_turn

    cid = str(uuid.uuid4())
    context = memory_keel.context()
    for message in ("Show task 99999999999999999999", f"Delete task {2**64}", "Complete 2**63"):
        result = await run_turn(memory_keel.graph, cid, message, context)
        assert result.awaiting_confirmation is None
    shown = await run_turn(memory_keel.graph, cid, "Show task 99999999999999999999", context)
    assert "Task 99999999999999999999 not found." in shown.reply
    after = await run_turn(memory_keel.graph, cid, "Add buy milk", context)
    assert after.reply == "Created task: buy milk"


async def test_a_message_with_many_requests_is_logged_whole_and_answered(memory_keel):
    from keel.graphs.run_turn import run_turn

    cid = str(uuid.uuid4())
    n = 45
    message = "; ".join(f"Add b-{k}" for k in range(n))
    result = await run_turn(memory_keel.graph, cid, message, memory_keel.context())
    assert result.reply.splitlines() == [f"Created task: b-{k}" for k in range(n)]
    logged = await memory_keel.messages.page(cid)
    assert [m.content for m in logged if m.role == "user"] == [message]
    assert len([m for m in logged if m.role == "tool"]) == n
    assert logged[-1].content == result.reply
    assert len(await memory_keel.store.list("local")) == n


async def test_a_resume_in_the_middle_of_a_turn_keeps_the_turn(memory_keel):
    from keel.graphs.run_turn import run_turn

    cid = str(uuid.uuid4())
    context = memory_keel.context(context_token_budget=250, loop_limit=12)
    for k in range(14):
        message = f"Add errand number {k} with a longish description to fill the window"
        result = await run_turn(memory_keel.graph, cid, message, context)
        expected = f"errand number {k} with a longish description to fill the window"
        assert result.reply == f"Created task: {expected}", result.reply
        assert any(e["type"] == "resumed" for e in result.events)
    listed = await run_turn(memory_keel.graph, cid, "Show all", context)
    for k in range(14):
        assert listed.reply.count(f"errand number {k} with") == 1, listed.reply
    assert len(await memory_keel.store.list("local")) == 14


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=LIMIT))
def test_random_text_parses_without_error_and_loses_no_line(text):
    parse_intents(text, TODO_TOOLS)
    confirms(text)
    is_yes(text)
    kept = strip_done(text, DEFAULT_DONE_MARKER)
    for line in lines(text):
        if not has_done(line):
            assert line.strip() in kept


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(content=st.text(min_size=1, max_size=2000).filter(lambda t: t.strip()))
async def test_whatever_the_user_types_is_logged_as_typed(memory_keel, content):
    from keel.graphs.run_turn import run_turn

    try:
        content.encode("utf-8")
    except UnicodeEncodeError:
        return  # refused at the door (422): see the API tests
    cid = str(uuid.uuid4())
    await run_turn(memory_keel.graph, cid, content, memory_keel.context())
    logged = await memory_keel.messages.page(cid)
    assert [m.content for m in logged if m.role == "user"] == [content]


async def test_a_list_of_500_items_is_refused_whole(memory_keel):
    from keel.graphs.run_turn import run_turn

    message = "add " + ", ".join(f"item {k}" for k in range(500))
    result = await run_turn(memory_keel.graph, str(uuid.uuid4()), message, memory_keel.context())
    assert "500 requests in one message" in result.reply and result.complete
    assert await memory_keel.store.list("local") == []


@pytest.mark.parametrize(
    "message",
    [
        "add 'unbalanced quote",
        'delete "the milk',
        "x" * 32_000,
        "add " + "🙂" * 8_000,
        "complete " + " and ".join(["the milk one"] * 400),
    ],
)
async def test_odd_messages_get_a_clear_answer(memory_keel, message):
    from keel.graphs.run_turn import run_turn

    await memory_keel.store.create("local", "buy milk")
    result = await run_turn(memory_keel.graph, str(uuid.uuid4()), message, memory_keel.context())
    assert result.reply.strip()


@pytest.mark.parametrize(
    "message",
    ["complete " + "1 " * 16_000, "delete " + ", ".join(str(k) for k in range(3_000))],
)
async def test_thousands_of_task_numbers_are_refused_whole(memory_keel, message):
    from keel.graphs.run_turn import run_turn

    await memory_keel.store.create("local", "buy milk")
    result = await run_turn(memory_keel.graph, str(uuid.uuid4()), message, memory_keel.context())
    assert "split it up" in result.reply and result.awaiting_confirmation is None
    assert [t["completed"] for t in await memory_keel.store.list("local")] == [False]
