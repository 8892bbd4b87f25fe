"""A question whose task changed elsewhere is put again once, naming the change, and answered.

Nothing done to a task elsewhere (in another conversation, another client) can leave a
conversation answering every message with its question; the log shows what was asked as it is
asked.
"""

import uuid

import pytest
from langgraph.types import Command

from keel.graphs.runner import thread_config
from keel.nodes.support.answers import AGAIN, CHANGED
from keel.tools.understanding.talk import REPLIES


async def titles(keel):
    return [(t["id"], t["title"], t["completed"]) for t in await keel.store.list("local")]


async def asked_to_delete(keel, title="book dentist"):
    await keel.store.create("local", title)
    cid = str(uuid.uuid4())
    asked = await keel.say(cid, "Delete task 1")
    assert asked.awaiting_confirmation is not None
    return cid


@pytest.mark.parametrize("answer", ["yes", "y", "confirm"])
async def test_a_rename_elsewhere_is_named_and_the_next_yes_deletes(keel, answer):
    cid = await asked_to_delete(keel)
    await keel.store.rename("local", 1, "call the dentist")
    again = await keel.say(cid, answer)
    assert again.reply == (
        f"{CHANGED} (before: Delete task 1 - book dentist). "
        "Are you sure you want to delete task 1? (yes/no)\nDelete task 1 - call the dentist"
    )
    assert again.awaiting_confirmation["changes"][0]["title"] == "call the dentist"
    done = await keel.say(cid, answer)
    assert done.awaiting_confirmation is None
    assert await titles(keel) == []


@pytest.mark.parametrize("answer", ["no", "cancel", "never mind"])
async def test_a_no_after_a_rename_elsewhere_cancels(keel, answer):
    cid = await asked_to_delete(keel)
    await keel.store.rename("local", 1, "call the dentist")
    result = await keel.say(cid, answer)
    assert result.awaiting_confirmation is None
    assert await titles(keel) == [(1, "call the dentist", False)]


async def test_a_new_request_after_a_rename_elsewhere_is_carried_out(keel):
    cid = await asked_to_delete(keel)
    await keel.store.rename("local", 1, "call the dentist")
    result = await keel.say(cid, "Add eggs")
    assert result.awaiting_confirmation is None
    assert await titles(keel) == [(1, "call the dentist", False), (2, "eggs", False)]
    listed = await keel.say(cid, "What's on my list?")
    assert "eggs" in listed.reply and listed.awaiting_confirmation is None


async def test_a_completion_elsewhere_is_named_before_the_yes_counts(keel):
    cid = await asked_to_delete(keel)
    await keel.store.complete("local", 1)
    again = await keel.say(cid, "yes")
    assert again.reply.startswith(f"{CHANGED} (before: Delete task 1 - book dentist).")
    assert again.reply.endswith("Delete task 1 - book dentist (done)")
    await keel.say(cid, "yes")
    assert await titles(keel) == []


async def test_a_delete_elsewhere_says_the_task_is_gone(keel):
    cid = await asked_to_delete(keel)
    await keel.store.delete("local", 1)
    result = await keel.say(cid, "yes")
    assert result.awaiting_confirmation is None
    assert "1" in result.reply
    assert (await keel.say(cid, "Add eggs")).awaiting_confirmation is None
    assert [t[1] for t in await titles(keel)] == ["eggs"]


async def test_renamed_again_and_again_every_message_is_still_taken(keel):
    cid = await asked_to_delete(keel)
    for n in range(3):
        await keel.store.rename("local", 1, f"dentist {n}")
        result = await keel.say(cid, "yes")
        assert result.reply.startswith(CHANGED)
        assert f"Delete task 1 - dentist {n}" in result.reply
    await keel.say(cid, "Add eggs")
    assert [t[1] for t in await titles(keel)] == ["dentist 2", "eggs"]


async def test_an_unclear_answer_is_asked_again_once_then_taken_as_a_message(keel):
    cid = await asked_to_delete(keel)
    again = await keel.say(cid, "hmm")
    assert again.reply.startswith(AGAIN)
    then = await keel.say(cid, "hmm")
    assert then.awaiting_confirmation is None
    assert await titles(keel) == [(1, "book dentist", False)]


async def test_the_log_holds_the_request_and_the_question_while_it_waits(keel):
    cid = await asked_to_delete(keel)
    contents = [m.content for m in await keel.messages.page(cid)]
    assert contents == [
        "Delete task 1",
        "Are you sure you want to delete task 1? (yes/no)\nDelete task 1 - book dentist",
    ]
    await keel.store.rename("local", 1, "call the dentist")
    await keel.say(cid, "yes")
    await keel.say(cid, "yes")
    contents = [m.content for m in await keel.messages.page(cid)]
    assert contents[2:5] == [
        "yes",
        f"{CHANGED} (before: Delete task 1 - book dentist). "
        "Are you sure you want to delete task 1? (yes/no)\nDelete task 1 - call the dentist",
        "yes",
    ]


async def test_command_resume_after_a_rename_elsewhere_puts_it_again_then_deletes(keel):
    await keel.store.create("local", "book dentist")
    cid, context = str(uuid.uuid4()), keel.context()
    config = thread_config(cid)
    await keel.graph.ainvoke({"content": "delete task 1"}, config, context=context)
    await keel.store.rename("local", 1, "call the dentist")
    await keel.graph.ainvoke(Command(resume="yes"), config, context=context)
    (again,) = (await keel.graph.aget_state(config)).interrupts
    assert again.value["question"].startswith(CHANGED)
    assert again.value["action_requests"][0]["change"]["title"] == "call the dentist"
    await keel.graph.ainvoke(
        Command(resume={"decisions": [{"type": "approve"}]}), config, context=context
    )
    assert await titles(keel) == []
    assert not (await keel.graph.aget_state(config)).interrupts


@pytest.mark.parametrize("answer", ["yes", "no", "y", "go ahead", "cancel"])
async def test_an_answer_with_nothing_waiting_is_told_so(keel, answer):
    cid = await asked_to_delete(keel)
    assert (await keel.say(cid, "no")).awaiting_confirmation is None
    result = await keel.say(cid, answer)
    assert result.reply == REPLIES["answer"]
    assert await titles(keel) == [(1, "book dentist", False)]
