"""The graph behaves the same for any client: driven directly, without keel's turn runner.

What a LangGraph SDK or Studio client does (plain inputs, ``Command(resume=...)``, the
``messages`` stream, no context or a partial one) is done here on the compiled graph itself.
"""

from __future__ import annotations

import uuid

import pytest
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from keel.checkpoints.conversation_store import ConversationNotFound
from keel.graphs.builder import build_graph, served
from keel.graphs.result import agent_state_of
from keel.graphs.runner import thread_config
from keel.nodes.models.chat import build_agent_model, said_done
from keel.nodes.models.markers import DoneLines
from keel.nodes.reset_conversation import RESET_MESSAGE
from keel.tools.next_step import record_next_step
from keel.tools.tasks.todo import TODO_TOOLS
from tests.helpers import strip_done
from tests.stub_openai import StubOpenAI

AGENT_TOOLS = [*TODO_TOOLS, record_next_step]


def last_ai(values: dict) -> AIMessage:
    return next(m for m in reversed(values["window"]) if isinstance(m, AIMessage))


async def paused_on_delete(keel, cid: str, context) -> None:
    config = thread_config(cid)
    await keel.graph.ainvoke({"content": "Add buy milk"}, config, context=context)
    await keel.graph.ainvoke({"content": "Delete task 1"}, config, context=context)


@pytest.mark.parametrize("answer", ["plain", "command"])
async def test_the_next_input_answers_a_waiting_confirmation(memory_keel, answer):
    cid, context = str(uuid.uuid4()), memory_keel.context()
    await paused_on_delete(memory_keel, cid, context)
    snap = await memory_keel.graph.aget_state(thread_config(cid))
    assert snap.next == ("turn",)  # the turn graph, run as one node of the graph around it
    assert agent_state_of(snap) == "tool_execution"  # it waits inside
    (waiting,) = snap.interrupts
    assert waiting.value["question"] == (
        "Are you sure you want to delete task 1? (yes/no)\nDelete task 1 - buy milk"
    )
    (action,) = waiting.value["action_requests"]  # LangChain's human-in-the-loop request
    assert action["name"] == "delete_todo_task" and action["args"] == {"task_id": 1}
    assert action["description"] == "Delete task 1 - buy milk"
    assert waiting.value["review_configs"] == [
        {"action_name": "delete_todo_task", "allowed_decisions": ["approve", "reject"]}
    ]
    calls, asking = snap.values["messages"][-2:]  # the calls, then the question (and its card)
    assert calls.type == "ai" and [c["name"] for c in calls.tool_calls] == ["delete_todo_task"]
    assert asking.type == "ai" and asking.text == waiting.value["question"]
    graph_input = {"content": "yes"} if answer == "plain" else Command(resume="yes")
    done = await memory_keel.graph.ainvoke(graph_input, thread_config(cid), context=context)
    assert last_ai(done).text == "Deleted task 1: buy milk"
    assert await memory_keel.store.list("local") == []
    after = await memory_keel.graph.aget_state(thread_config(cid))
    assert after.next == () and not after.interrupts
    shown = [(m.type, m.text) for m in after.values["messages"] if m.type != "tool" and m.text]
    assert shown[-4:] == [
        ("human", "Delete task 1"),
        ("ai", "Are you sure you want to delete task 1? (yes/no)\nDelete task 1 - buy milk"),
        ("human", "yes"),
        ("ai", "Deleted task 1: buy milk"),
    ]
    assert after.values["stats"]["turns"] == 2  # the answer is no turn of its own


async def test_a_plain_no_cancels_and_the_next_message_is_a_new_turn(memory_keel):
    cid, context = str(uuid.uuid4()), memory_keel.context()
    await paused_on_delete(memory_keel, cid, context)
    config = thread_config(cid)
    cancelled = await memory_keel.graph.ainvoke({"content": "no"}, config, context=context)
    assert last_ai(cancelled).text == "Cancelled: task 1 was not deleted."
    listed = await memory_keel.graph.ainvoke({"content": "List my tasks"}, config, context=context)
    assert "buy milk" in last_ai(listed).text


async def test_two_deletes_in_one_message_are_asked_once(memory_keel):
    cid, context = str(uuid.uuid4()), memory_keel.context()
    config = thread_config(cid)
    for title in ("milk", "eggs", "jam"):
        await memory_keel.graph.ainvoke({"content": f"Add {title}"}, config, context=context)
    await memory_keel.graph.ainvoke(
        {"content": "Delete task 1; delete task 2"}, config, context=context
    )
    (asked,) = (await memory_keel.graph.aget_state(config)).interrupts
    assert [a["args"]["task_id"] for a in asked.value["action_requests"]] == [1, 2]
    assert asked.value["question"] == (
        "Are you sure you want to delete 2 tasks (1, 2)? (yes/no)\n"
        "Delete task 1 - milk\nDelete task 2 - eggs"
    )
    unclear = await memory_keel.graph.ainvoke(Command(resume="hmm?"), config, context=context)
    assert unclear["__interrupt__"][0].value["question"].startswith("Please answer yes or no.")
    await memory_keel.graph.ainvoke(Command(resume="sure thing"), config, context=context)
    assert [t["title"] for t in await memory_keel.store.list("local")] == ["jam"]


@pytest.mark.parametrize(
    ("decisions", "left"),
    [
        ([{"type": "approve"}], ["jam"]),  # one decision for all
        ([{"type": "reject", "message": "keep them"}], ["milk", "eggs", "jam"]),
        ([{"type": "approve"}, {"type": "reject"}], ["eggs", "jam"]),  # one a call
    ],
)
async def test_agent_chat_uis_decisions_answer_the_question(memory_keel, decisions, left):
    cid, context = str(uuid.uuid4()), memory_keel.context()
    config = thread_config(cid)
    for title in ("milk", "eggs", "jam"):
        await memory_keel.graph.ainvoke({"content": f"Add {title}"}, config, context=context)
    await memory_keel.graph.ainvoke(
        {"messages": [HumanMessage("Delete task 1; delete task 2", id="ui-1")]},
        config,
        context=context,
    )
    assert (await memory_keel.graph.aget_state(config)).interrupts
    done = await memory_keel.graph.ainvoke(
        Command(resume={"decisions": decisions}), config, context=context
    )
    assert [t["title"] for t in await memory_keel.store.list("local")] == left
    assert "__interrupt__" not in done
    assert done["messages"][-1].type == "ai" and "DONE" not in done["messages"][-1].text


async def test_a_decision_it_cannot_take_asks_again(memory_keel):
    cid, context = str(uuid.uuid4()), memory_keel.context()
    await paused_on_delete(memory_keel, cid, context)
    config = thread_config(cid)
    edited = {"type": "edit", "edited_action": {"name": "delete_todo_task", "args": {"task_id": 9}}}
    again = await memory_keel.graph.ainvoke(
        Command(resume={"decisions": [edited]}), config, context=context
    )
    assert again["__interrupt__"][0].value["question"].startswith("Please answer yes or no.")
    assert [t["title"] for t in await memory_keel.store.list("local")] == ["buy milk"]


async def test_the_conversation_is_in_messages_for_langgraphs_chat_clients(memory_keel):
    cid, context = str(uuid.uuid4()), memory_keel.context()
    config = thread_config(cid)
    said = {"messages": [HumanMessage([{"type": "text", "text": "Add buy milk"}], id="ui-1")]}
    added = await memory_keel.graph.ainvoke(said, config, context=context)
    assert [(m.type, m.text) for m in added["messages"] if m.type != "tool" and m.text] == [
        ("human", "Add buy milk"),
        ("ai", "Created task: buy milk"),
    ]
    assert added["messages"][0].id == "ui-1"  # the client's own message, not a copy
    assert any(m.type == "tool" for m in added["messages"])  # the call and its result
    listed = await memory_keel.graph.ainvoke({"content": "List my tasks"}, config, context=context)
    texts = [m.text for m in listed["messages"] if m.type != "tool" and m.text]
    assert texts[:2] == ["Add buy milk", "Created task: buy milk"]
    assert texts[2] == "List my tasks" and "buy milk" in texts[-1]
    reset = await memory_keel.graph.ainvoke(
        {"messages": [HumanMessage("/reset", id="ui-2")]}, config, context=context
    )
    assert [m.text for m in reset["messages"]][-2:] == ["/reset", RESET_MESSAGE]
    assert reset["mission"] is None


async def test_the_messages_stream_carries_only_assistant_text_without_done(memory_keel):
    cid, context = str(uuid.uuid4()), memory_keel.context()
    seen = []
    async for message, metadata in memory_keel.graph.astream(
        {"content": "Add buy milk"},
        thread_config(cid),
        context=context,
        stream_mode="messages",  # LangGraph's default: no subgraphs
    ):
        seen.append((message, metadata["langgraph_node"]))
    assert seen and all(isinstance(m, AIMessageChunk) for m, _ in seen)
    assert {node for _, node in seen} == {"assistant"}
    text = "".join(m.text for m, _ in seen)
    assert text == "Created task: buy milk" and "DONE" not in text
    state = await memory_keel.graph.aget_state(thread_config(cid))
    assert last_ai(state.values).text == "Created task: buy milk"
    assert said_done(last_ai(state.values)) and state.values["complete"]


async def test_openai_tokens_stream_without_the_done_line(memory_keel):
    with StubOpenAI() as stub:
        stub.reply(tool_calls=[{"name": "create_todo_task", "args": {"title": "milk"}}])
        stub.reply("Created task: milk\nKEEL DONE: added milk")
        model = build_agent_model(AGENT_TOOLS, api_key="test", model="stub", base_url=stub.base_url)
        context = memory_keel.context(model=model)
        chunks = [
            message
            async for message, _ in memory_keel.graph.astream(
                {"content": "add milk"},
                thread_config(str(uuid.uuid4())),
                context=context,
                stream_mode="messages",
            )
        ]
        assert all(r.get("stream") for r in stub.requests)  # tokens really streamed
    text = "".join(c.text for c in chunks)
    assert text == "Created task: milk" and len(chunks) > 3
    assert not any("DONE" in c.text for c in chunks)


@pytest.mark.parametrize("subgraphs", [False, True])
async def test_keel_events_and_tokens_reach_a_stream_with_or_without_subgraphs(
    memory_keel, subgraphs
):
    """Each once: the events and tokens of the turn graph, which runs inside the node ``turn``."""
    with StubOpenAI() as stub:
        stub.reply(tool_calls=[{"name": "create_todo_task", "args": {"title": "milk"}}])
        stub.reply("Created task: milk\nKEEL DONE: added milk")
        model = build_agent_model(AGENT_TOOLS, api_key="test", model="stub", base_url=stub.base_url)
        events, chunks = [], []
        async for part in memory_keel.graph.astream(
            {"content": "add milk"},
            thread_config(str(uuid.uuid4())),
            context=memory_keel.context(model=model),
            stream_mode=["updates", "custom", "messages"],
            subgraphs=subgraphs,
        ):
            mode, chunk = part[-2:]
            if mode == "custom":
                events.append(chunk["type"])
            elif mode == "messages":
                chunks.append(chunk[0])
    assert events == ["round_started", "tool_call", "round_started"]
    assert "".join(c.text for c in chunks) == "Created task: milk"


@pytest.mark.parametrize("make", [served, build_graph], ids=["served", "turn-graph"])
async def test_a_run_with_no_context_opens_the_process_run_from_the_settings(monkeypatch, make):
    monkeypatch.setenv("KEEL_DATABASE_URL", "memory")
    monkeypatch.setenv("KEEL_LOOP_LIMIT", "3")
    graph = make(checkpointer=InMemorySaver())
    config = thread_config(str(uuid.uuid4()))
    added = await graph.ainvoke({"content": "Add buy milk"}, config)
    assert last_ai(added).text == "Created task: buy milk"
    partial = {"user_id": "ann", "topic_gap_seconds": 10, "not_a_setting": True}
    anns = thread_config(str(uuid.uuid4()))
    mine = await graph.ainvoke({"content": "What's on my list?"}, anns, context=partial)
    assert last_ai(mine).text == "Your list is empty."  # ann's list, not local's
    with pytest.raises(ConversationNotFound):  # local's thread is not ann's to use
        await graph.ainvoke({"content": "What's on my list?"}, config, context=partial)
    again = await graph.ainvoke({"content": "What's on my list?"}, config)
    assert "buy milk" in last_ai(again).text


@pytest.mark.parametrize(
    "pieces",
    [
        ["Created task: milk\nKEEL DONE: added"],
        ["Creat", "ed task: ", "milk\nKEEL DO", "NE: added"],
        ["Created task: milk\r", "\nKEEL DONE: added\r\n"],
        ["\n\nCreated task: milk\n\n", "KEEL DONE: x\nmore\n"],
        ["one\nKEEL DONE: x\n\ntwo"],
    ],
)
def test_done_lines_give_what_strip_done_gives(pieces):
    lines = DoneLines()
    out = [p for piece in pieces for p in lines.feed(piece)] + lines.flush()
    assert "".join(out) == strip_done("".join(pieces)) and lines.done


async def test_replies_in_messages_render_as_markdown_and_read_as_text(memory_keel):
    cid, context = str(uuid.uuid4()), memory_keel.context()
    config = thread_config(cid)
    two = await memory_keel.graph.ainvoke({"content": "Add eggs, milk"}, config, context=context)
    assert last_ai(two).text == "Created task: eggs\nCreated task: milk"  # keel's own clients
    assert two["messages"][-1].text == "Created task: eggs\n\nCreated task: milk"  # paragraphs
    await memory_keel.graph.ainvoke({"content": "Complete task 2"}, config, context=context)
    listed = await memory_keel.graph.ainvoke({"content": "Show all"}, config, context=context)
    expected = "Your tasks:\n- [ ] 1. eggs\n- [x] 2. milk"  # a task list: the ids kept
    assert last_ai(listed).text == expected and listed["messages"][-1].text == expected
