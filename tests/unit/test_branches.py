"""A fork is a conversation too: its turns are logged, read and shown as a branch of their own."""

import uuid

import pytest
from langchain_core.messages import AIMessage

from keel.checkpoints.branches import (
    BEGINNING,
    MAIN,
    CheckpointNotKept,
    Lineage,
    Segment,
    TurnPlace,
)
from keel.checkpoints.requests import RequestStore
from keel.graphs.run_turn import KeyReused, run_turn
from keel.graphs.runner import thread_config
from keel.graphs.viewed_branch import branch_tips
from keel.nodes.state.lineage import lineage
from tests.unit.scripted import ScriptedModel

NUMBERED = "functions.create_todo_task:0"
"""A provider that numbers its tool calls gives every turn's first call this id."""


def create(title: str) -> AIMessage:
    call = {"name": "create_todo_task", "args": {"title": title}, "id": NUMBERED}
    return AIMessage("", tool_calls=[{**call, "type": "tool_call"}])


def creating(*titles: str) -> ScriptedModel:
    replies = []
    for title in titles:
        replies += [create(title), AIMessage(f"Added {title}.\nKEEL DONE: added")]
    return ScriptedModel(replies=replies, seen=[])


async def say(keel, cid, text, model, at=None):
    config = at or thread_config(cid)
    return await keel.graph.ainvoke({"content": text}, config, context=keel.context(model=model))


async def end_of_turn(keel, cid, turn):
    history = [s async for s in keel.graph.aget_state_history(thread_config(cid))]
    return next(s for s in history if not s.next and s.values["stats"]["turns"] == turn)


async def active(keel, cid):
    values = (await keel.graph.aget_state(thread_config(cid))).values
    return [(m.role, m.content) for m in await keel.messages.page(cid, lineage=lineage(values))]


def users(rows):
    return [content for role, content in rows if role == "user"]


async def forked(keel):
    """A conversation of two turns, forked after its first with another message."""
    cid = str(uuid.uuid4())
    model = creating("apples", "pears", "plums")
    await say(keel, cid, "Add apples", model)
    await say(keel, cid, "Add pears", model)
    turn_1 = await end_of_turn(keel, cid, 1)
    await say(keel, cid, "Add plums", model, at=turn_1.config)
    return cid, model, turn_1


async def test_a_forks_turn_is_logged_and_shown_and_the_original_stays(keel):
    cid, _, _ = await forked(keel)

    shown = await active(keel, cid)
    assert [role for role, _ in shown] == ["user", "tool", "assistant"] * 2
    assert [content for role, content in shown if role != "tool"] == [
        "Add apples",
        "Added apples.",
        "Add plums",
        "Added plums.",
    ]
    assert '"title": "plums"' in shown[4][1]
    everything = await keel.messages.page(cid)
    assert users([(m.role, m.content) for m in everything]) == [
        "Add apples",
        "Add pears",
        "Add plums",
    ]
    original = await keel.messages.page(cid, lineage=Lineage())
    assert users([(m.role, m.content) for m in original]) == ["Add apples", "Add pears"]
    assert "Added pears." in [m.content for m in original]


async def test_a_fork_runs_its_own_tool_calls_and_a_replay_runs_none(keel):
    cid, model, turn_1 = await forked(keel)
    titles = [t["title"] for t in await keel.store.list("local")]
    assert titles == ["apples", "pears", "plums"]  # the same call id, another turn: it ran

    before = [(m.key, m.content) for m in await keel.messages.page(cid)]
    model.replies += [create("plums"), AIMessage("Added plums.\nKEEL DONE: added")]
    await say(keel, cid, "Add plums", model, at=turn_1.config)  # the same turn, run again
    history = [s async for s in keel.graph.aget_state_history(thread_config(cid))]
    before_tools = next(s for s in history if s.next and s.values["window"][-1].tool_calls)
    model.replies += [AIMessage("Added plums.\nKEEL DONE: added")]
    await keel.graph.ainvoke(None, before_tools.config, context=keel.context(model=model))

    assert [(m.key, m.content) for m in await keel.messages.page(cid)] == before
    assert [t["title"] for t in await keel.store.list("local")] == titles
    assert users(await active(keel, cid)) == ["Add apples", "Add plums"]  # found its branch


async def test_a_forks_context_holds_its_own_branch_only(keel):
    cid, model, _ = await forked(keel)
    model.replies += [create("kiwis"), AIMessage("Added kiwis.\nKEEL DONE: added")]
    model.seen.clear()
    await say(keel, cid, "Add kiwis", model)

    shown = "\n".join(str(m.content) for m in model.seen[0])
    assert "plums" in shown and "apples" in shown
    assert "pears" not in shown
    assert users(await active(keel, cid)) == ["Add apples", "Add plums", "Add kiwis"]


async def test_the_forks_first_turn_sees_only_what_came_before_it(keel):
    cid = str(uuid.uuid4())
    model = creating("apples", "pears")
    await say(keel, cid, "Add apples", model)
    await say(keel, cid, "Add pears", model)
    turn_1 = await end_of_turn(keel, cid, 1)
    model.replies += [create("plums"), AIMessage("Added plums.\nKEEL DONE: added")]
    model.seen.clear()
    await say(keel, cid, "Add plums", model, at=turn_1.config)

    shown = "\n".join(str(m.content) for m in model.seen[0])
    assert "apples" in shown
    assert "pears" not in shown


async def test_a_fork_of_the_original_after_a_fork_shares_the_originals_turns(keel):
    cid, model, _ = await forked(keel)
    history = [s async for s in keel.graph.aget_state_history(thread_config(cid))]
    turn_2 = next(
        s for s in history if not s.next and "Add pears" in [m.text for m in s.values["window"]]
    )
    model.replies += [create("figs"), AIMessage("Added figs.\nKEEL DONE: added")]
    await say(keel, cid, "Add figs", model, at=turn_2.config)

    assert users(await active(keel, cid)) == ["Add apples", "Add pears", "Add figs"]


async def test_a_forks_confirmation_is_logged_on_its_branch(keel):
    cid = str(uuid.uuid4())
    context = keel.context()
    for text in ("Add buy milk", "Add call mom", "Add walk dog"):
        await keel.graph.ainvoke({"content": text}, thread_config(cid), context=context)
    turn_2 = await end_of_turn(keel, cid, 2)
    await keel.graph.ainvoke({"content": "Delete task 1"}, turn_2.config, context=context)
    await keel.graph.ainvoke({"content": "yes"}, thread_config(cid), context=context)

    shown = await active(keel, cid)
    assert users(shown) == ["Add buy milk", "Add call mom", "Delete task 1", "yes"]
    assert any("Are you sure" in content for role, content in shown if role == "assistant")
    assert "Add walk dog" in users([(m.role, m.content) for m in await keel.messages.page(cid)])


@pytest.mark.parametrize("extra", [0, 1])
async def test_a_forked_turn_written_again_stays_on_its_branch_in_order(keel, extra):
    """A re-run whose state never learnt of the fork writes nothing twice, and nothing apart."""
    cid = str(uuid.uuid4())

    def row(key, role, opens=False):
        return {
            "message_key": key,
            "role": role,
            "content": key,
            "topic_id": None,
            "opens_turn": opens,
        }

    main = TurnPlace(MAIN, 2, "fork-2")
    await keel.messages.append(cid, "local", [row("a:user", "user", True)], main)
    batch = [row("b:user", "user", True), row("b:tool", "tool")]
    assert await keel.messages.append(cid, "local", batch, main) == "fork-2"
    again = batch + [row("b:reply", "assistant")] * extra
    assert await keel.messages.append(cid, "local", again, main) == "fork-2"

    fork = Lineage((Segment("fork-2"), Segment(MAIN, 1)))
    expected = ["b:user", "b:tool", "b:reply"][: 2 + extra]
    assert [m.key for m in await keel.messages.page(cid, lineage=fork)] == expected
    assert [m.key for m in await keel.messages.page(cid, lineage=Lineage())] == ["a:user"]


async def test_a_fork_of_a_fork_sees_both_branches_it_descends_from(keel):
    cid, model, _ = await forked(keel)
    model.replies += [create("kiwis"), AIMessage("Added kiwis.\nKEEL DONE: added")]
    await say(keel, cid, "Add kiwis", model)
    history = [s async for s in keel.graph.aget_state_history(thread_config(cid))]
    plums = next(
        s for s in history if not s.next and "Add plums" in [m.text for m in s.values["window"]]
    )
    model.replies += [create("limes"), AIMessage("Added limes.\nKEEL DONE: added")]
    model.seen.clear()
    await say(keel, cid, "Add limes", model, at=plums.config)

    assert users(await active(keel, cid)) == ["Add apples", "Add plums", "Add limes"]
    shown = "\n".join(str(m.content) for m in model.seen[0])
    assert "plums" in shown and "kiwis" not in shown and "pears" not in shown
    logged = users([(m.role, m.content) for m in await keel.messages.page(cid)])
    assert sorted(logged) == sorted(
        ["Add apples", "Add pears", "Add plums", "Add kiwis", "Add limes"]
    )


async def test_a_fork_from_a_checkpoint_that_knows_no_branch_starts_after_its_turns(keel):
    """A checkpoint written before branches were recorded: the turns it counted are its own."""
    cid = str(uuid.uuid4())
    model = creating("apples", "pears", "plums")
    await say(keel, cid, "Add apples", model)
    await say(keel, cid, "Add pears", model)
    turn_1 = await end_of_turn(keel, cid, 1)
    earlier = await keel.graph.aupdate_state(turn_1.config, {"branch": None}, as_node="turn")
    model.seen.clear()
    await say(keel, cid, "Add plums", model, at=earlier)

    shown = "\n".join(str(m.content) for m in model.seen[0])
    assert "apples" in shown and "pears" not in shown
    assert users(await active(keel, cid)) == ["Add apples", "Add plums"]


# ---- A message edited: run from the checkpoint its turn started from --------------------------


async def opening(keel, cid, content):
    rows = await keel.messages.page(cid)
    return next(m for m in rows if m.role == "user" and m.content == content)


async def turns_of(keel, cid, *texts, **kw):
    for text in texts:
        await run_turn(keel.graph, cid, text, keel.context(), **kw)


async def test_an_edit_sent_again_without_a_key_is_a_branch_of_its_own_not_a_replay(keel):
    cid = str(uuid.uuid4())
    await turns_of(keel, cid, "Add apples", "Add pears", "Add figs")
    pears = await opening(keel, cid, "Add pears")
    for text in ("Add plums", "Add pears"):  # the original's text, sent again from its point
        await run_turn(keel.graph, cid, text, keel.context(), from_checkpoint=pears.from_checkpoint)

    sent = (await keel.messages.siblings(cid, [pears.from_checkpoint]))[pears.from_checkpoint]
    assert [s.content for s in sent] == ["Add pears", "Add plums", "Add pears"]
    tips = await branch_tips(keel.graph, cid, sent)
    assert len(set(tips)) == 3 and None not in tips  # each branch still has its own end
    original = await keel.graph.aget_state(thread_config(cid, tips[0]))
    assert users(await lined(keel, cid, original.values)) == ["Add apples", "Add pears", "Add figs"]
    titles = [t["title"] for t in await keel.store.list("local")]
    assert titles == ["apples", "pears", "figs", "plums", "pears"]  # each message ran its tool


async def test_the_first_message_edited_starts_with_nothing_and_names_no_parent(keel):
    cid = str(uuid.uuid4())
    await turns_of(keel, cid, "Add apples", "Add pears")
    first = await opening(keel, cid, "Add apples")
    assert first.from_checkpoint == BEGINNING
    await run_turn(keel.graph, cid, "Add lemons", keel.context(), from_checkpoint=BEGINNING)

    state = await keel.graph.aget_state(thread_config(cid))
    assert state.values["stats"]["turns"] == 1
    assert users(await active(keel, cid)) == ["Add lemons"]
    parents = [s.parent_config async for s in keel.graph.aget_state_history(thread_config(cid))]
    assert all(p is None or p["configurable"]["checkpoint_id"] != BEGINNING for p in parents)
    assert sum(p is None for p in parents) == 2  # the conversation's first, and the edit's


async def test_a_checkpoint_gone_by_the_time_the_turn_runs_changes_nothing(keel):
    cid = str(uuid.uuid4())
    await turns_of(keel, cid, "Add apples", "Add pears")
    before = [(m.key, m.content) for m in await keel.messages.page(cid)]
    gone = "1f0c0000-0000-6000-8000-000000000000"
    with pytest.raises(CheckpointNotKept):  # the check passed (a prune came after it)
        await run_turn(keel.graph, cid, "Add plums", keel.context(), from_checkpoint=gone)

    assert [(m.key, m.content) for m in await keel.messages.page(cid)] == before
    assert [t["title"] for t in await keel.store.list("local")] == ["apples", "pears"]
    answer = await run_turn(keel.graph, cid, "Show all", keel.context())
    assert "apples" in answer.reply and "pears" in answer.reply


async def test_an_idempotency_key_names_the_checkpoint_as_well_as_the_text(keel):
    cid = str(uuid.uuid4())
    requests = RequestStore(keel.db)
    await turns_of(keel, cid, "Add apples", "Add pears")
    pears = await opening(keel, cid, "Add pears")
    sent = {"key": "k-1", "requests": requests, "from_checkpoint": pears.from_checkpoint}
    first = await run_turn(keel.graph, cid, "Add plums", keel.context(), **sent)
    again = await run_turn(keel.graph, cid, "Add plums", keel.context(), **sent)
    assert again.replayed and again.reply == first.reply
    with pytest.raises(KeyReused):
        await run_turn(
            keel.graph, cid, "Add plums", keel.context(), **{**sent, "from_checkpoint": BEGINNING}
        )
    assert [t["title"] for t in await keel.store.list("local")] == ["apples", "pears", "plums"]


async def lined(keel, cid, values):
    rows = await keel.messages.page(cid, lineage=lineage(values))
    return [(m.role, m.content) for m in rows]


async def test_a_lineage_thousands_of_forks_deep_reads_its_rows(keel):
    cid = str(uuid.uuid4())
    await keel.say(cid, "Add apples")
    await keel.say(cid, "Add pears")
    deep = tuple(Segment(f"fork-{n}", n) for n in range(3000, 0, -1))  # none wrote a row here
    for upto, seen in ((1, ["Add apples"]), (2, ["Add apples", "Add pears"])):
        lineage = Lineage((Segment("fork-3001"), *deep, Segment(MAIN, upto)))
        rows = await keel.messages.page(cid, lineage=lineage)
        assert [r.content for r in rows if r.role == "user"] == seen
