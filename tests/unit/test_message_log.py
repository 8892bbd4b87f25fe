"""The message log: complete, ordered, written once, outside graph state."""

import uuid

from keel.checkpoints.conversation_store import ConversationStore
from keel.checkpoints.messages import COMMAND, LogKeyTaken
from keel.graphs.run_turn import run_turn
from keel.graphs.runner import thread_config
from keel.nodes.run_context import TurnStart


async def test_fifty_turns_across_three_topics_are_logged_complete_and_in_order(keel):
    cid = str(uuid.uuid4())
    context = keel.context()
    expected_users = []
    for turn in range(50):
        if turn == 17:
            text = "new topic, add groceries"
        elif turn == 34:
            text = "lets discuss chores and add sweep floor"
        else:
            text = f"Add errand {turn}"
        expected_users.append(text)
        await run_turn(keel.graph, cid, text, context)

    logged = await keel.messages.page(cid)
    users = [m for m in logged if m.role == "user"]
    assert [m.content for m in users] == expected_users
    assert [m.id for m in logged] == sorted(m.id for m in logged)
    keys = [m.key for m in logged]
    assert len(keys) == len(set(keys))
    # each turn: user, tool result, one assistant message (the reply; its tool call round stays
    # in the checkpoints)
    assert len(logged) == 3 * 50
    for i in range(0, len(logged), 3):
        assert [m.role for m in logged[i : i + 3]] == ["user", "tool", "assistant"]
        assert logged[i + 2].content.startswith("Created task:")
        assert "DONE" not in logged[i + 2].content
    topic_ids = list(dict.fromkeys(m.topic_id for m in logged))
    assert len(topic_ids) == 3
    boundaries = [i for i in range(1, len(logged)) if logged[i].topic_id != logged[i - 1].topic_id]
    assert boundaries == [17 * 3, 34 * 3]

    values = (await keel.graph.aget_state(thread_config(cid))).values
    assert len(values["window"]) == 4  # only the last turn stays in graph state, all its rounds


async def test_running_a_turn_on_from_its_checkpointed_calls_writes_nothing_twice(keel):
    """What finishing a cut-off turn does: LangGraph runs the turn on from the checkpoint that
    holds the model's tool calls, and the calls that ran already are answered by the ledger."""
    cid = str(uuid.uuid4())
    context = keel.context()
    await run_turn(keel.graph, cid, "Add buy milk", context)
    await run_turn(keel.graph, cid, "Add eggs", context)
    before = [(m.key, m.content) for m in await keel.messages.page(cid)]
    at_calls = None
    async for snap in keel.graph.aget_state_history(thread_config(cid)):
        window = snap.values.get("window") or []
        if snap.next == ("turn",) and window and getattr(window[-1], "tool_calls", None):
            at_calls = snap  # the newest: the second turn's calls, before they ran
            break
    assert at_calls is not None and window[0].content == "Add eggs"
    again = context.run_by_keel(TurnStart(cut_off=True))
    await keel.graph.ainvoke(None, at_calls.config, context=again)
    assert [(m.key, m.content) for m in await keel.messages.page(cid)] == before
    assert [t["title"] for t in await keel.store.list("local")] == ["buy milk", "eggs"]


async def test_the_confirmation_question_and_answer_are_logged(keel):
    cid = str(uuid.uuid4())
    task = await keel.store.create("local", "buy milk")
    await run_turn(keel.graph, cid, f"Delete task {task['id']}", keel.context())
    await run_turn(keel.graph, cid, "yes", keel.context())
    logged = [(m.role, m.content) for m in await keel.messages.page(cid)]
    assert logged[0] == ("user", f"Delete task {task['id']}")
    question = (
        f"Are you sure you want to delete task {task['id']}? (yes/no)\n"
        f"Delete task {task['id']} - buy milk"
    )  # the task named beside the question: a page reloaded shows what it was about
    assert ("assistant", question) in logged
    assert logged.index(("user", "yes")) > logged.index(("assistant", question))
    assert logged[-1] == ("assistant", f"Deleted task {task['id']}: buy milk")
    assert len(logged) == len(set(logged))


async def test_a_key_already_holding_another_users_message_is_an_error_not_skipped(keel):
    cid = str(uuid.uuid4())
    row = {"message_key": "turn-1:user", "role": "user", "content": "Add tea", "topic_id": None}
    await keel.messages.append(cid, "ann", [row])
    await keel.messages.append(cid, "ann", [row, {**row, "message_key": "turn-2:user"}])  # re-run
    try:
        await keel.messages.append(cid, "bob", [{**row, "content": "Add coffee"}])
    except LogKeyTaken as exc:
        assert "turn-1:user" in str(exc)
    else:
        raise AssertionError("bob's row was skipped in silence")
    logged = await keel.messages.page(cid)
    assert [(m.key, m.content) for m in logged] == [
        ("turn-1:user", "Add tea"),
        ("turn-2:user", "Add tea"),
    ]


async def test_a_reset_is_logged_where_it_happened_and_read_as_no_message(keel):
    cid = str(uuid.uuid4())
    context = keel.context()
    await run_turn(keel.graph, cid, "Add buy milk", context)
    said_at = await keel.messages.last_message_at(cid)
    reset = await run_turn(keel.graph, cid, "/reset", context)
    logged = await keel.messages.page(cid)
    assert [m.role for m in logged] == ["user", "tool", "assistant", COMMAND]
    assert logged[-1].content == reset.reply and logged[-1].topic_id == reset.topic["id"]
    # The model's context, topic detection and the conversation list read no command.
    assert await keel.messages.recent(cid, topic_id=reset.topic["id"]) == []
    assert [m.role for m in await keel.messages.recent(cid)] == ["user", "tool", "assistant"]
    assert await keel.messages.last_message_at(cid) == said_at
    listed = await ConversationStore(keel.db).listed(cid, "local")
    assert listed is not None and listed["preview"] == "Created task: buy milk"
    await run_turn(keel.graph, cid, "Add eggs", context)
    roles = [m.role for m in await keel.messages.page(cid)]
    assert roles == ["user", "tool", "assistant", COMMAND, "user", "tool", "assistant"]
