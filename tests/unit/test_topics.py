"""Topic detection: phrases (both lists), word boundaries, time gaps, the seed timeline."""

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from langchain_core.messages import AIMessage

from keel.graphs.result import topic_segment
from keel.graphs.run_turn import run_turn
from keel.nodes.context.topic_shifts import CORRECTION_PHRASES, SWITCH_PHRASES, detect_topic_change
from keel.nodes.support.topic_names import SMALL_TALK, topic_title
from keel.tools.tasks.todo import TODO_TOOLS
from tests.unit.scripted import ScriptedModel

NOW = datetime(2026, 1, 7, 10, 0, tzinfo=UTC)
RECENT = NOW - timedelta(minutes=1)


@pytest.mark.parametrize("phrase", sorted(set(SWITCH_PHRASES + CORRECTION_PHRASES)))
def test_every_phrase_of_both_lists_starts_a_topic(phrase):
    message = f"ok so {phrase.upper()} the deployment"
    assert detect_topic_change(message, RECENT, NOW, 3600) == ("phrase", phrase)


def test_both_seed_lists_are_complete():
    assert set(SWITCH_PHRASES) == {
        "new topic",
        "different topic",
        "let's discuss",
        "lets discuss",
        "switching to",
        "moving on to",
        "but we weren't discussing",
        "but we werent discussing",
        "we were talking about",
    }
    assert set(CORRECTION_PHRASES) == {
        "but we weren't discussing",
        "but we werent discussing",
        "we were talking about",
        "not about that",
        "different topic",
        "let's discuss",
        "lets discuss",
        "switching topics",
        "new topic",
        "back to",
    }


@pytest.mark.parametrize(
    "message",
    [
        "please send feedback to the team",
        "a brand new topical idea",
        "we were talking aboutness",
        "the hatchback top is fine",
        "add renew topics subscription",
        "outlets discuss prices",
    ],
)
def test_phrases_match_on_word_boundaries_only(message):
    assert detect_topic_change(message, RECENT, NOW, 3600) is None


def test_curly_apostrophes_match():
    assert detect_topic_change("Let\u2019s discuss the UI", RECENT, NOW, 3600) == (
        "phrase",
        "let's discuss",
    )


def test_time_gap():
    assert detect_topic_change("hi", NOW - timedelta(seconds=3601), NOW, 3600) == ("time_gap", None)
    assert detect_topic_change("hi", NOW - timedelta(seconds=3600), NOW, 3600) is None
    assert detect_topic_change("hi", None, NOW, 3600) is None


def test_reset_command():
    assert detect_topic_change(" /RESET ", RECENT, NOW, 3600) == ("user_reset", None)


@pytest.mark.parametrize(
    "message,title",
    [
        ("lets discuss a change in the webui please", "Change in the webui"),
        ("Add buy milk", "Add buy milk"),
        ("  one two\nthree  ", "One two three"),
        ("Add buy milk and bread for the weekend breakfast", "Add buy milk and bread"),
        ("Good morning! Could you add call the plumber about the tap?", "Add call the plumber"),
        ("Anyway, back to the groceries: add bananas", "Groceries"),
        ("New topic: how do I make sourdough starter?", "How do I make sourdough starter"),
        ("word " * 30, "Word word word word word word"),
        ("x" * 100, "X" + "x" * 79 + "..."),
        ("hi there!", SMALL_TALK),
        ("thanks, bye", SMALL_TALK),
        ("", SMALL_TALK),
    ],
)
def test_a_title_is_a_few_words_of_what_the_message_is_about(message, title):
    assert topic_title(message, TODO_TOOLS) == title


def history_text(model: ScriptedModel) -> str:
    """What the model read between its system prompt and the message: the context it was given."""
    return "\n".join(m.text for m in model.seen[-1][1:-1])


async def test_seed_timeline_switch_and_correction_keep_the_old_topic_out(keel, clock):
    """The timeline of the context-loss report: SSE feed talk, a night's gap, chat UI talk,
    then the user's correction."""
    model = ScriptedModel(replies=[], seen=[])
    cid = str(uuid.uuid4())

    async def say(text, at):
        clock.set(at)
        model.replies.append(AIMessage(f"noted: {text[:20]}\nKEEL DONE: ok"))
        context = keel.context(clock=clock, model=model, topic_gap_seconds=3600)
        return await run_turn(keel.graph, cid, text, context)

    day1 = datetime(2026, 1, 6, 16, 25, tzinfo=UTC)
    await say("the SSE feed for issue 52 drops events", day1)
    await say("the SSE feed reconnects too slowly", day1 + timedelta(minutes=10))
    sse_topic = (await keel.topics.active(cid)).id
    await say("SSE feed: use a heartbeat?", day1 + timedelta(minutes=22))

    day2 = datetime(2026, 1, 7, 10, 8, 20, tzinfo=UTC)
    switch = await say("lets discuss a change in the webui chat", day2)
    [changed] = [e for e in switch.events if e["type"] == "topic_changed"]
    assert changed["data"]["reason"] == "phrase" and changed["data"]["phrase"] == "lets discuss"
    assert changed["data"]["previous_topic_id"] == sse_topic
    ui_topic = changed["data"]["new_topic_id"]

    await say("good. also it always looks like pm is about to reply", day2 + timedelta(minutes=21))
    await say("tell me which /commands you would tell scar to use", day2 + timedelta(minutes=24))
    assert "SSE" not in history_text(model)
    assert "webui" in history_text(model)

    correction = await say(
        "but we werent discussing the sse feed now", day2 + timedelta(minutes=26)
    )
    [changed] = [e for e in correction.events if e["type"] == "topic_changed"]
    assert changed["data"]["reason"] == "phrase"
    assert changed["data"]["phrase"] == "but we werent discussing"
    assert changed["data"]["previous_topic_id"] == ui_topic
    seen = history_text(model)
    assert "switched topics or corrected you" in seen
    assert "SSE feed" not in seen and "heartbeat" not in seen
    assert "/commands" in seen  # the last turns before the correction stay

    topics = await keel.topics.list(cid)
    assert [t.is_active for t in topics] == [False, False, True]
    assert all(t.ended_at and t.summary for t in topics[:2])
    logged = await keel.messages.page(cid)
    assert [m.role for m in logged] == ["user", "assistant"] * 7  # nothing was deleted
    assert logged[0].content == "the SSE feed for issue 52 drops events"


async def test_a_silence_longer_than_the_gap_starts_a_topic(memory_keel, clock, monkeypatch):
    monkeypatch.setenv("KEEL_TOPIC_GAP_SECONDS", "5")
    from keel.graphs.settings import Settings

    gap = Settings().topic_gap_seconds
    cid = str(uuid.uuid4())
    context = memory_keel.context(clock=clock, topic_gap_seconds=gap)
    await run_turn(memory_keel.graph, cid, "Add buy milk", context)
    clock.advance(seconds=4)
    same = await run_turn(memory_keel.graph, cid, "Show all", context)
    assert not [e for e in same.events if e["type"] == "topic_changed"]
    clock.advance(seconds=6)
    later = await run_turn(memory_keel.graph, cid, "Add walk dog", context)
    [changed] = [e for e in later.events if e["type"] == "topic_changed"]
    assert changed["data"] == {
        "previous_topic_id": same.topic["id"],
        "new_topic_id": later.topic["id"],
        "reason": "time_gap",
        "phrase": None,
        "title": "Add walk dog",
    }


async def test_a_configured_title_model_names_the_topic(memory_keel):
    titler = ScriptedModel(replies=[AIMessage('"Groceries for the week"')], seen=[])
    result = await run_turn(
        memory_keel.graph,
        str(uuid.uuid4()),
        "Add buy milk",
        memory_keel.context(title_model=titler),
    )
    assert result.topic["title"] == "Groceries for the week"


async def test_a_failing_title_model_falls_back_to_first_words(memory_keel):
    class Broken(ScriptedModel):
        def _generate(self, *a, **k):
            raise RuntimeError("provider down")

    result = await run_turn(
        memory_keel.graph,
        str(uuid.uuid4()),
        "Add buy milk",
        memory_keel.context(title_model=Broken(replies=[], seen=[])),
    )
    assert result.topic["title"] == "Add buy milk" and result.complete


async def test_starting_a_topic_again_under_its_id_changes_nothing(keel):
    cid = str(uuid.uuid4())
    first = await keel.topics.start(cid, "one")
    second = await keel.topics.start(cid, "two", "summary of one", topic_id="topic-2")
    again = await keel.topics.start(cid, "two", "summary of one", topic_id="topic-2")
    assert again == second
    topics = await keel.topics.list(cid)
    assert [t.id for t in topics] == [first.id, "topic-2"]
    assert [t.is_active for t in topics] == [False, True]
    assert topics[0].summary == "summary of one"


async def topic_rows(keel, cid):
    """The conversation's topics as the API shows them (title, summary, ...)."""
    return [topic_segment(row) for row in await keel.topics.list(cid)]


async def test_a_topic_is_titled_by_what_it_is_about_not_by_a_greeting(memory_keel):
    cid = str(uuid.uuid4())
    hello = await memory_keel.say(cid, "hi there")
    assert hello.topic["title"] != "hi there"
    asked = await memory_keel.say(cid, "add buy milk to my groceries")
    assert asked.topic == {"id": hello.topic["id"], "title": "Add buy milk to my groceries"}
    await memory_keel.say(cid, "new topic: could you please help me plan the garden for spring")
    garden = (await topic_rows(memory_keel, cid))[-1]
    assert garden["title"] == "Plan the garden for spring"


async def test_a_summary_says_what_was_asked_and_done_without_pleasantries(memory_keel):
    cid = str(uuid.uuid4())
    for said in ["hi there", "add buy milk to my groceries", "add buy eggs", "thanks!"]:
        await memory_keel.say(cid, said)
    await memory_keel.say(cid, "new topic: the garden")
    groceries = (await topic_rows(memory_keel, cid))[0]
    assert groceries["summary"] == (
        "Asked: add buy milk to my groceries; add buy eggs. "
        "Done: Created task 1: buy milk (groceries list); Created task 2: buy eggs"
    )


async def test_a_summary_tells_what_the_tools_did_not_what_the_replies_showed(memory_keel):
    cid = str(uuid.uuid4())
    said = ["add buy milk", "what's on my list?", "delete task 1", "no", "clear my shopping list"]
    for text in said:
        await memory_keel.say(cid, text)
    await memory_keel.say(cid, "new topic: the garden")
    summary = (await topic_rows(memory_keel, cid))[0]["summary"]
    assert summary == (
        "Asked: add buy milk; what's on my list; delete task 1; clear my shopping list. "
        "Done: Created task 1: buy milk; Listed 1 task"
    )  # no listing quoted, nothing of the delete refused nor of the list with nothing to clear


def test_a_title_is_made_of_any_text_a_person_types():
    assert topic_title("plan\x00 the garden \ud800party") == "Plan the garden ?party"


def test_a_summary_stored_the_earlier_way_is_read_without_learning_a_model(monkeypatch, tmp_path):
    import keel.tools.understanding.nlu as nlu
    import keel.tools.understanding.nlu.training as training
    from keel.nodes.support.topic_names import readable_summary

    def never(*args, **kwargs):
        raise AssertionError("a model was trained to read a summary")

    monkeypatch.setattr(training, "train", never)
    monkeypatch.setattr(nlu, "CACHE", tmp_path)  # no model learned earlier on this machine
    nlu._reader.cache_clear()
    stored = "hi there. Last exchange: user: add milk; assistant: Created task: milk"
    assert readable_summary(stored) == "Asked: add milk. Done: Created task: milk"
    assert topic_title("thanks!") == SMALL_TALK
