"""Topic shifts nobody announces, returns to an earlier topic, and a todo session that stays one
topic: keel's detector in the graph (with its sentence embeddings), on memory and SQLite."""

import sys
import uuid

import pytest
import structlog
from langchain_core.messages import AIMessage
from langgraph.runtime import ExecutionInfo, Runtime

from keel.graphs.resources import prepared
from keel.graphs.run_turn import run_turn
from keel.graphs.runner import thread_config
from keel.nodes.context import embeddings
from keel.nodes.context.dialogue_segments import segment
from keel.nodes.context.embeddings import load_embedder
from keel.nodes.context.topic_model import USER, Said, alternating
from keel.nodes.context.topic_shifts import assess
from keel.nodes.topic import topic_detect
from keel.tools.tasks.todo import TODO_TOOLS
from tests.unit.scripted import ScriptedModel

PUPPY = [
    ("Our puppy chews every shoe in the house.", "Puppies teethe until about six months."),
    ("We bought chew toys but she prefers sneakers.", "Put the shoes away and praise the toys."),
]
MUSIC = [("What kind of music do you listen to while you work?", "Mostly jazz without lyrics.")]
BACK = ("Anyway, back to the puppy: should we try a crate at night?", "A crate can help her.")


def topic_events(result):
    return [e["data"] for e in result.events if e["type"] == "topic_changed"]


async def chat(keel, cid, model, message, reply):
    model.replies.append(AIMessage(f"{reply}\nKEEL DONE: answered"))
    return await run_turn(keel.graph, cid, message, keel.context(model=model))


async def test_an_unannounced_shift_opens_a_topic_and_a_return_reopens_the_first(keel):
    model, cid = ScriptedModel(replies=[], seen=[]), str(uuid.uuid4())
    for message, reply in PUPPY:
        assert topic_events(await chat(keel, cid, model, message, reply)) == []
    puppy = (await keel.topics.active(cid)).id
    [shift] = topic_events(await chat(keel, cid, model, *MUSIC[0]))
    assert shift["reason"] == "semantic" and shift["previous_topic_id"] == puppy
    with structlog.testing.capture_logs() as logs:
        [back] = topic_events(await chat(keel, cid, model, *BACK))
    assert back["reason"] == "returned" and back["new_topic_id"] == puppy
    assert back["phrase"] == "back to"
    assert (await keel.topics.active(cid)).id == puppy
    assert len(await keel.topics.list(cid)) == 2  # the music topic, and the puppy's again
    shown = "\n".join(m.text for m in model.seen[-1][1:-1])  # all the model read before the message
    assert "sneakers" in shown  # the puppy topic's own history is the context again
    assert any(e["event"] == "topic_changed" and e["score"] for e in logs)


async def test_a_todo_session_stays_one_topic(keel):
    cid = str(uuid.uuid4())
    session = [
        "Add buy milk",
        "Add call the plumber about the leaking kitchen tap",
        "What's on my list?",
        "Rename task 2 to call the electrician",
        "yes",
        "Complete 1",
        "Delete task 2",
        "yes",
        "show all",
    ]
    for message in session:
        result = await run_turn(keel.graph, cid, message, keel.context())
        assert topic_events(result) == [], message
    assert len(await keel.topics.list(cid)) == 1


@pytest.fixture
def without_wordllama(monkeypatch):
    """The embedding package as if it were not installed (the process's embedder forgotten)."""
    monkeypatch.setitem(sys.modules, "wordllama", None)
    embeddings.load_embedder.cache_clear()
    yield
    embeddings.load_embedder.cache_clear()


async def test_without_the_model_keel_says_so_once_and_runs_on_the_phrases(
    memory_keel, without_wordllama
):
    with structlog.testing.capture_logs() as logs:
        assert load_embedder() is None and load_embedder() is None
    assert [e["event"] for e in logs] == ["topic_embeddings_unavailable"]
    model, cid = ScriptedModel(replies=[], seen=[]), str(uuid.uuid4())
    context = memory_keel.context(model=model)
    for message, reply in [*PUPPY, *MUSIC]:
        model.replies.append(AIMessage(f"{reply}\nKEEL DONE: answered"))
        assert topic_events(await run_turn(memory_keel.graph, cid, message, context)) == []
    model.replies.append(AIMessage("ok\nKEEL DONE: ok"))
    switched = await run_turn(memory_keel.graph, cid, "new topic: the garden", context)
    assert [e["reason"] for e in topic_events(switched)] == ["phrase"]


def test_the_evaluation_runs_the_same_detector():
    turns = [m for pair in [*PUPPY, *MUSIC, BACK] for m in pair]
    changes = segment(alternating(turns), load_embedder(), TODO_TOOLS, 0.4, 0.35)
    assert [(i, s.reason) for i, s in changes] == [(4, "semantic"), (6, "returned")]


async def test_a_replayed_return_changes_nothing(keel):
    """A turn re-run after a crash meets its return made already: it makes the same one."""
    model, cid = ScriptedModel(replies=[], seen=[]), str(uuid.uuid4())
    for message, reply in [*PUPPY, *MUSIC]:
        await chat(keel, cid, model, message, reply)
    puppy = (await keel.topics.list(cid))[0]
    before = (await keel.graph.aget_state(thread_config(cid))).values
    state = {**before, "request": BACK[0], "stats": {"turns": 4}}
    context = await prepared(keel.context(model=model))
    info = ExecutionInfo(checkpoint_id="", checkpoint_ns="", task_id="", thread_id=cid)
    runtime = Runtime(context=context, stream_writer=lambda _: None, execution_info=info)
    first = await topic_detect(state, runtime)
    again = await topic_detect(state, runtime)  # the same input, the return already made
    assert first["topic"]["id"] == again["topic"]["id"] == puppy.id
    topics = {t.id: t for t in await keel.topics.list(cid)}
    assert len(topics) == 2 and topics[puppy.id].is_active
    assert topics[puppy.id].summary == puppy.summary  # not overwritten by the replay


def test_one_is_the_off_switch_even_for_a_very_long_message():
    recent = alternating([m for pair in PUPPY for m in pair])
    text = " ".join(f"Elephants migrate across the savannah ({n})." for n in range(2000))
    essay = Said(USER, text)
    assert assess(essay, recent, None, load_embedder(), TODO_TOOLS, 1.0) is None
    assert assess(essay, recent, None, load_embedder(), TODO_TOOLS, 0.4) is not None


GROCERIES = ["hi there", "add buy milk to my groceries", "add buy eggs", "thanks!"]
GARDEN = ["new topic: plan the garden", "add plant tomatoes"]


@pytest.mark.parametrize(
    "message",
    [
        "back to the groceries: add bananas",
        "let's go back to the groceries",
        "we were talking about groceries",
        "ok, return to the groceries please",
    ],
)
async def test_going_back_to_a_named_topic_returns_to_it(keel, message):
    cid = str(uuid.uuid4())
    for said in GROCERIES:
        await keel.say(cid, said)
    groceries = (await keel.topics.active(cid)).id
    for said in GARDEN:
        await keel.say(cid, said)
    back = await keel.say(cid, message)
    [change] = topic_events(back)
    assert change["reason"] == "returned" and change["new_topic_id"] == groceries
    assert back.topic["id"] == groceries
    assert [t.is_active for t in await keel.topics.list(cid)] == [True, False]


async def test_going_back_to_a_topic_there_never_was_opens_one(memory_keel):
    cid = str(uuid.uuid4())
    for said in [*GROCERIES, *GARDEN]:
        await memory_keel.say(cid, said)
    back = await memory_keel.say(cid, "back to the dentist: add call the dentist")
    [change] = topic_events(back)
    assert change["reason"] == "phrase" and change["phrase"] == "back to"
    assert len(await memory_keel.topics.list(cid)) == 3


@pytest.mark.parametrize(
    "question", ["is the milk done?", "has the milk been done?", "Is milk still open?"]
)
async def test_a_short_question_about_the_topic_stays_in_it(keel, question):
    cid = str(uuid.uuid4())
    for said in ["Add buy milk", "Add buy eggs"]:
        await keel.say(cid, said)
    asked = await keel.say(cid, question)
    assert topic_events(asked) == []
    assert len(await keel.topics.list(cid)) == 1


@pytest.mark.parametrize(
    "message",
    [
        "I need to get back to work tomorrow, remind me to call the plumber",
        "call the plumber back to confirm the date",
    ],
)
def test_back_to_inside_a_sentence_names_no_topic(message):
    from keel.nodes.context.topic_shifts import named_return

    assert named_return(message) is None


def test_a_return_names_the_topic_that_holds_its_words_not_one_that_shares_a_few():
    from keel.nodes.context.topic_shifts import go_back, named_return

    named = named_return("ok, back to the kyoto trip: what about trains?")
    assert named is not None and named.subject == "the kyoto trip"
    closed = [("food", "Kyoto restaurants"), ("trip", "Trip to Kyoto")]
    assert go_back(named, closed[:1]) is None  # half of its words: not the one meant
    assert go_back(named, closed).topic_id == "trip"  # type: ignore[union-attr]
    assert go_back(named, closed, "Plan the Kyoto trip") is None  # already there: it stays


async def test_the_node_reads_the_topics_last_messages_with_their_speakers(keel, monkeypatch):
    """The network's window in the graph is what it was trained on: the topic's last messages,
    user and assistant, oldest first; tool results are not messages of the conversation."""
    import keel.nodes.topic as node

    seen = []

    def spy(message, recent, *args):
        seen.append((message, list(recent)))
        return assess(message, recent, *args)

    monkeypatch.setattr(node, "assess", spy)
    cid = str(uuid.uuid4())
    for said in ["Add buy milk", "Add buy eggs", "Add call mom", "What's on my list?"]:
        await keel.say(cid, said)
    message, recent = seen[-1]
    assert message == Said(USER, "What's on my list?")
    assert [s.speaker for s in recent] == [USER, "assistant"] * 3
    assert recent[0].text == "Add buy milk" and recent[-1].text.startswith("Created task: call mom")
    assert not any("create_todo_task" in s.text for s in recent)
