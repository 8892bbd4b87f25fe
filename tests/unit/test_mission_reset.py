"""Mission reset on a completed todolist, the cases where it must not happen, and /reset."""

import uuid

import structlog
from langchain_core.messages import AIMessage

from keel.graphs.result import reset_answer
from keel.graphs.run_turn import run_turn
from keel.graphs.runner import snapshot, thread_config
from tests.unit.scripted import ScriptedModel, call


async def reset(keel, cid):
    return await run_turn(keel.graph, cid, "", keel.context(), command={"command": "reset"})


def resets(result):
    return [e["data"] for e in result.events if e["type"] == "state_updated"]


async def test_completed_todolist_meets_a_new_query(keel):
    cid = str(uuid.uuid4())
    first = await keel.say(cid, "Add buy milk")
    old_id = first.todolist["id"]
    with structlog.testing.capture_logs() as logs:
        second = await keel.say(cid, "What's on my list?")
    assert resets(second) == [
        {
            "mission_reset": True,
            "reason": "completed_todolist_detected",
            "previous_todolist_id": old_id,
        }
    ]
    assert second.mission == "What's on my list?"
    assert second.todolist["id"] != old_id
    names = [e["event"] for e in logs]
    assert names.index("resetting_mission_for_new_query") < names.index("mission_reset_complete")
    [entry] = [e for e in logs if e["event"] == "resetting_mission_for_new_query"]
    assert entry["previous_mission_preview"] == "Add buy milk"
    assert entry["previous_todolist_id"] == old_id


async def test_the_reset_keeps_every_other_field(keel):
    cid = str(uuid.uuid4())
    await keel.say(cid, "Add buy milk")
    config = thread_config(cid)
    await keel.graph.aupdate_state(config, {"answers": {"color": "blue"}}, as_node="turn")
    before = (await keel.graph.aget_state(config)).values
    await keel.say(cid, "Show all")
    after = (await keel.graph.aget_state(config)).values
    assert after["answers"] == {"color": "blue"}
    assert after["topic"] == before["topic"]
    assert after["stats"]["turns"] == before["stats"]["turns"] + 1
    assert [a["kind"] for a in after["audit"]] == ["mission_reset"]


async def test_no_reset_on_the_first_query(keel):
    assert resets(await keel.say(str(uuid.uuid4()), "Add buy milk")) == []


async def test_an_unfinished_turn_ends_its_mission_and_the_audit_keeps_its_steps(memory_keel):
    cid = str(uuid.uuid4())
    stuck = ScriptedModel(replies=[], seen=[])  # never answers with DONE
    first = await memory_keel.say(cid, "Add milk", model=stuck, loop_limit=1)
    assert not first.complete and first.todolist["items"][0]["status"] == "pending"
    second = await memory_keel.say(cid, "Delete task 1")
    assert resets(second) == [
        {
            "mission_reset": True,
            "reason": "unfinished_turn_abandoned",
            "previous_todolist_id": first.todolist["id"],
        }
    ]
    assert second.mission == "Delete task 1" and second.todolist["id"] != first.todolist["id"]
    assert [i["tool"] for i in second.todolist["items"]] == ["delete_todo_task"]
    state = (await memory_keel.graph.aget_state(thread_config(cid))).values
    [entry] = [a for a in state["audit"] if a["kind"] == "mission_reset"]
    assert entry["detail"]["abandoned_steps"] == ["Add milk"]


async def test_a_topic_change_ends_an_unfinished_mission_too(memory_keel):
    cid = str(uuid.uuid4())
    stuck = ScriptedModel(replies=[], seen=[])
    await memory_keel.say(cid, "Add milk", model=stuck, loop_limit=1)
    moved = await memory_keel.say(cid, "New topic: what's on my list?")
    assert [r["reason"] for r in resets(moved)] == ["unfinished_turn_abandoned"]
    assert moved.complete and moved.mission == "New topic: what's on my list?"


async def test_no_reset_while_a_question_is_pending(memory_keel):
    cid = str(uuid.uuid4())
    await memory_keel.say(cid, "Add buy milk")
    await memory_keel.graph.aupdate_state(
        thread_config(cid), {"pending_question": "Which list?"}, as_node="turn"
    )
    result = await memory_keel.say(cid, "the work list")
    assert resets(result) == []
    assert result.mission == "Add buy milk"


async def test_a_missing_todolist_warns_and_goes_on(memory_keel):
    cid = str(uuid.uuid4())
    await memory_keel.say(cid, "Add buy milk")
    await memory_keel.graph.aupdate_state(thread_config(cid), {"todolist": None}, as_node="turn")
    with structlog.testing.capture_logs() as logs:
        result = await memory_keel.say(cid, "Show all")
    assert resets(result) == []
    assert "todolist_missing" in [e["event"] for e in logs]
    assert result.complete and result.todolist is not None


async def test_user_reset_starts_a_topic_and_keeps_history(keel):
    cid = str(uuid.uuid4())
    first = await keel.say(cid, "Add buy milk")
    before = await keel.count_messages(cid)
    result = await reset(keel, cid)
    answer = reset_answer(result)
    assert answer["success"] is True and answer["previous_messages_preserved"] is True
    assert "preserved" in answer["message"]
    assert answer["new_topic_id"] != first.topic["id"]
    assert [e["type"] for e in result.events] == ["topic_changed", "state_updated"]
    events = {e["type"]: e["data"] for e in result.events}
    assert events["state_updated"] == {
        "mission_reset": True,
        "reason": "user_requested",
        "previous_todolist_id": first.todolist["id"],
    }
    assert events["topic_changed"]["reason"] == "user_reset"
    state = await snapshot(keel.graph, cid)
    assert state["mission"] is None and state["todolist"] is None
    assert state["topic"]["id"] == answer["new_topic_id"]
    assert await keel.count_messages(cid) == before + 1  # the history, and the reset's own row
    nxt = await keel.say(cid, "Show all")
    assert nxt.topic["id"] == answer["new_topic_id"] and nxt.mission == "Show all"
    assert resets(nxt) == []


async def test_user_reset_drops_a_pending_confirmation(memory_keel):
    cid = str(uuid.uuid4())
    task = await memory_keel.store.create("local", "buy milk")
    asked = await memory_keel.say(cid, f"Delete task {task['id']}")
    assert asked.awaiting_confirmation
    await reset(memory_keel, cid)
    assert (await snapshot(memory_keel.graph, cid))["pending_confirmation"] is None
    after = await memory_keel.say(cid, "yes")
    assert after.awaiting_confirmation is None
    assert await memory_keel.store.list("local") == [task]


async def test_mission_reset_payload_with_a_scripted_model(memory_keel):
    cid = str(uuid.uuid4())
    model = ScriptedModel(
        replies=[AIMessage("hi\nKEEL DONE: ok"), AIMessage("again\nKEEL DONE: ok")], seen=[]
    )
    first = await memory_keel.say(cid, "What can you help me with?", model=model)
    second = await memory_keel.say(cid, "And what else can you do?", model=model)
    assert resets(second)[0]["previous_todolist_id"] == first.todolist["id"]


async def test_a_question_ends_the_turn_and_its_answer_continues_the_mission(memory_keel):
    cid = str(uuid.uuid4())
    question = call("ask_user", question="Which days are free?")
    model = ScriptedModel(
        replies=[
            AIMessage("Happy to.", tool_calls=[question]),
            AIMessage("Then plan around Friday.\nKEEL DONE: planned"),
        ],
        seen=[],
    )
    asked = await memory_keel.say(cid, "Help me plan my week", model=model)
    assert asked.reply == "Happy to.\n\nWhich days are free?" and not asked.complete
    assert len(model.seen) == 1  # asked, not nudged
    assert asked.tool_calls == []  # the question is no tool that runs
    state = (await memory_keel.graph.aget_state(thread_config(cid))).values
    assert state["pending_question"] == "Which days are free?"

    answered = await memory_keel.say(cid, "only Friday", model=model)
    assert resets(answered) == []
    assert answered.mission == "Help me plan my week" and answered.complete
    state = (await memory_keel.graph.aget_state(thread_config(cid))).values
    assert state["pending_question"] is None
    assert state["answers"] == {"Which days are free?": "only Friday"}
    shown = "\n".join(m.text for m in model.seen[1])
    assert "Which days are free? -> only Friday" in shown


async def test_a_reply_ending_in_a_question_asks_nothing_the_next_request_is_new(memory_keel):
    cid = str(uuid.uuid4())
    chatty = ScriptedModel(replies=[AIMessage("Hi! How can I help you today?")] * 3, seen=[])
    greeted = await memory_keel.say(
        cid, "Can you help me get organised?", model=chatty, loop_limit=1
    )
    assert not greeted.complete
    state = (await memory_keel.graph.aget_state(thread_config(cid))).values
    assert not state.get("pending_question")
    added = await memory_keel.say(cid, "Add call the plumber")
    assert [r["reason"] for r in resets(added)] == ["unfinished_turn_abandoned"]
    assert added.mission == "Add call the plumber"
    assert added.reply == "Created task: call the plumber"


async def test_a_closing_question_after_the_work_is_done_is_no_pending_question(memory_keel):
    cid = str(uuid.uuid4())
    model = ScriptedModel(
        replies=[
            AIMessage("", tool_calls=[call("create_todo_task", title="milk")]),
            AIMessage("Added it. Anything else?"),
            AIMessage("Added milk.\nKEEL DONE: added"),
        ],
        seen=[],
    )
    result = await memory_keel.say(cid, "Add milk", model=model)
    state = (await memory_keel.graph.aget_state(thread_config(cid))).values
    assert result.complete and not state.get("pending_question")  # nudged, then done


async def test_user_reset_forgets_the_answers(memory_keel):
    cid = str(uuid.uuid4())
    await memory_keel.say(cid, "Add buy milk")
    config = thread_config(cid)
    await memory_keel.graph.aupdate_state(config, {"answers": {"q?": "a"}}, as_node="turn")
    await reset(memory_keel, cid)
    assert (await memory_keel.graph.aget_state(config)).values["answers"] == {}


async def nodes_run(keel, cid: str, text: str) -> list[str]:
    """The nodes one turn of ``text`` enters, in order."""
    context = keel.context()
    entered = []
    async for namespace, update in keel.graph.astream(
        {"content": text},
        thread_config(cid),
        context=context,
        stream_mode="updates",
        subgraphs=True,
    ):
        if namespace:  # the turn graph's nodes, inside the graph around it
            entered.extend(update)
    return entered


async def test_a_node_with_nothing_to_do_is_not_entered(memory_keel):
    cid = str(uuid.uuid4())
    first = await nodes_run(memory_keel, cid, "Add buy milk")
    assert first[:3] == ["user_input", "topic_detect", "plan"]  # no plan yet: nothing to reset
    assert "resume" not in first  # the window is far from its budget
    second = await nodes_run(memory_keel, cid, "Add eggs")
    assert second[:4] == ["user_input", "topic_detect", "reset", "plan"]  # the plan was done
    await memory_keel.graph.aupdate_state(
        thread_config(cid), {"pending_question": "Which list?"}, as_node="turn"
    )
    answered = await nodes_run(memory_keel, cid, "the work list")
    assert answered[:4] == ["user_input", "topic_detect", "reset", "assistant"]  # plan kept


async def test_small_talk_is_no_mission_and_a_plans_steps_name_the_tasks(memory_keel):
    cid = str(uuid.uuid4())
    greeted = await memory_keel.say(cid, "hey there")
    assert greeted.mission is None and greeted.todolist is None and greeted.complete
    asked = await memory_keel.say(cid, "I need to get groceries: eggs, spinach and rice")
    assert asked.mission == "I need to get groceries: eggs, spinach and rice"
    assert resets(asked) == []  # small talk left nothing to reset
    steps = [i["description"] for i in asked.todolist["items"]]
    assert steps[-2:] == ["Add spinach", "Add rice"]  # not "I need to spinach"
    renamed = await memory_keel.say(cid, "rename task 2 to baby spinach")
    assert [i["description"] for i in renamed.todolist["items"]] == [
        "Rename task 2 to baby spinach"
    ]
    assert (await memory_keel.say(cid, "no")).complete
    thanked = await memory_keel.say(cid, "thanks!")
    assert thanked.mission is None and thanked.todolist is None
    assert [r["reason"] for r in resets(thanked)] == ["completed_todolist_detected"]
