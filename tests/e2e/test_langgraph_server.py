"""keel's graph under the local LangGraph server (`langgraph dev`), driven by the official SDK.

The server is started from langgraph.json as a user would start it (bounded, on a free port,
stopped after), on a SQLite database of its own; the SDK, Studio's API, sees what Studio shows.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from langchain_core.messages import AIMessage, convert_to_messages
from langgraph.pregel.remote import RemoteGraph
from langgraph_sdk import get_client
from langgraph_sdk.schema import Command

from keel.nodes.reset_conversation import RESET_MESSAGE
from keel.nodes.support.answers import AGAIN
from tests.integration.server import free_port, keel_server, running

ROOT = Path(__file__).resolve().parents[2]
LANGGRAPH = Path(sys.executable).with_name("langgraph")
START_SECONDS = 90


@pytest.fixture(scope="module")
def langgraph_dev() -> Iterator[str]:
    """``langgraph dev`` serving keel's graph; yields its URL."""
    workdir = Path(tempfile.mkdtemp(prefix="keel-lg-"))
    with langgraph_server(f"sqlite:///{workdir / 'keel.db'}", workdir) as url:
        yield url


@contextmanager
def langgraph_server(
    database_url: str | None,
    workdir: Path,
    config: str = "langgraph.json",
    cwd: Path | None = None,
    **extra: str,
) -> Iterator[str]:
    """``langgraph dev`` with ``config`` (in the checkout) on ``database_url`` (None: keel's
    default); yields its URL. It runs in ``cwd`` (``workdir`` if not given), where it keeps its
    own state, so servers of tests that run at once share nothing.
    """  # noqa: D205
    port = free_port()
    env = {
        **os.environ,
        "KEEL_LOG_LEVEL": "warning",
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        **extra,
    }
    env.pop("OPENAI_API_KEY", None)
    env.pop("KEEL_DATABASE_URL", None)
    if database_url is not None:
        env["KEEL_DATABASE_URL"] = database_url
    url = f"http://127.0.0.1:{port}"
    command = [str(LANGGRAPH), "dev", "--port", str(port), "--no-browser", "--no-reload"]
    log = workdir / "server.log"
    config_file = str(ROOT / config)
    with running(
        [*command, "--config", config_file], cwd or workdir, env, log, f"{url}/ok", START_SECONDS
    ):
        yield url
    assert "BlockingError" not in log.read_text(), log.read_text()[-4000:]


async def test_a_fresh_checkout_runs_on_the_default_database(tmp_path):
    """No database named: the user's data directory, opened without blocking the event loop."""
    data = tmp_path / "data"
    with langgraph_server(None, tmp_path, XDG_DATA_HOME=str(data)) as url:
        client = get_client(url=url)
        thread = await client.threads.create()
        done = await client.runs.wait(
            thread["thread_id"], "keel", input={"content": "Add oat milk"}
        )
        assert _texts(done)[-1] == "Created task: oat milk"
    assert (data / "keel" / "keel.db").is_file()


async def _assistant(client) -> str:
    found = await client.assistants.search(graph_id="keel")
    return found[0]["assistant_id"]


def _of(parts: list, mode: str) -> list:
    """The stream's parts of ``mode``, from the graph and from the turn inside it."""
    return [p for p in parts if p.event.split("|")[0] == mode]


def _texts(values: dict) -> list[str]:
    return [m["content"] for m in values.get("window", []) if isinstance(m["content"], str)]


async def test_the_schemas_give_studio_its_forms_and_the_graph_its_picture(langgraph_dev):
    client = get_client(url=langgraph_dev)
    assistant = await _assistant(client)
    drawing = await client.assistants.get_graph(assistant)  # the default: the turn's nodes too
    expanded = await client.assistants.get_graph(assistant, xray=True)  # Studio's expanded view
    assert expanded == drawing
    nodes = {n["id"].removeprefix("turn:") for n in drawing["nodes"]} - {"__start__", "__end__"}
    assert nodes == {
        "user_input",
        "reset_conversation",
        "reopen_topic",
        "remind",
        "topic_detect",
        "reset",
        "plan",
        "resume",
        "assistant",
        "tool_execution",
        "response",
    }
    edges = {
        (e["source"].removeprefix("turn:"), e["target"].removeprefix("turn:"))
        for e in drawing["edges"]
    }
    assert {("user_input", "tool_execution"), ("tool_execution", "response")} <= edges
    assert ("tool_execution", "tool_execution") not in edges  # a confirmation waits inside
    assert {("user_input", "reset_conversation"), ("reset_conversation", "__end__")} <= edges
    assert {("user_input", "reopen_topic"), ("reopen_topic", "__end__")} <= edges
    assert {("user_input", "remind"), ("remind", "__end__")} <= edges
    schemas = await client.assistants.get_schemas(assistant)
    for name in ("input_schema", "output_schema", "context_schema", "state_schema"):
        assert schemas[name], name
    inputs = schemas["input_schema"]
    assert not inputs.get("required")  # a message, or a command
    assert {"content", "messages", "command", "topic_id"} <= set(inputs["properties"])
    context = schemas["context_schema"]["properties"]
    assert {"user_id", "loop_limit", "done_marker", "topic_gap_seconds"} <= set(context)
    plain = {"string", "integer", "null"}
    for name, field in context.items():  # plain data: no clients, no stores
        types = {t["type"] for t in field.get("anyOf", [field])}
        assert types <= plain, name


async def test_a_turn_needs_no_context_and_ignores_unknown_keys(langgraph_dev):
    client = get_client(url=langgraph_dev)
    thread = await client.threads.create()
    done = await client.runs.wait(
        thread["thread_id"],
        "keel",
        input={"content": "Add water the plants"},
        context={"user_id": "studio-a", "unknown": 1},
    )
    assert done["complete"] and _texts(done)[-1] == "Created task: water the plants"
    again = await client.runs.wait(
        (await client.threads.create())["thread_id"], "keel", input={"content": "List my tasks"}
    )
    assert again["complete"]  # no context at all: the default user, the server's settings


@pytest.mark.parametrize("answer", ["command", "plain"])
async def test_delete_asks_first_and_either_kind_of_answer_resumes(langgraph_dev, answer):
    client = get_client(url=langgraph_dev)
    user = {"user_id": f"studio-{answer}"}
    tid = (await client.threads.create())["thread_id"]
    added = await client.runs.wait(tid, "keel", input={"content": "Add buy milk"}, context=user)
    assert _texts(added)[-1] == "Created task: buy milk"
    listed = await client.runs.wait(
        tid, "keel", input={"content": "What's on my list?"}, context=user
    )
    assert "buy milk" in _texts(listed)[-1]

    await client.runs.wait(tid, "keel", input={"content": "Delete task 1"}, context=user)
    paused = await client.threads.get_state(tid)
    assert paused["next"] == ["turn"]
    asked = paused["interrupts"][0]["value"]
    assert asked["question"] == (
        "Are you sure you want to delete task 1? (yes/no)\nDelete task 1 - buy milk"
    )
    assert [a["description"] for a in asked["action_requests"]] == ["Delete task 1 - buy milk"]
    if answer == "command":
        run = await client.runs.wait(tid, "keel", command=Command(resume="yes"), context=user)
    else:
        run = await client.runs.wait(tid, "keel", input={"content": "yes"}, context=user)
    assert _texts(run)[-1] == "Deleted task 1: buy milk"
    state = await client.threads.get_state(tid)
    assert state["next"] == [] and state["values"]["agent_state"] == "response"
    assert not state["interrupts"]
    history = [m["content"] for m in state["values"]["window"]]
    assert not any("DONE" in str(text) for text in history)
    empty = await client.runs.wait(
        tid, "keel", input={"content": "What's on my list?"}, context=user
    )
    assert _texts(empty)[-1] == "Your list is empty."


async def test_a_chat_client_holds_the_conversation_through_messages(langgraph_dev):
    """What Agent Chat UI sends and reads: ``messages`` in, ``values.messages`` out, Approve."""
    client = get_client(url=langgraph_dev)
    user = {"user_id": "studio-messages"}
    tid = (await client.threads.create())["thread_id"]

    def said(text: str, n: int) -> dict:
        return {"messages": [{"type": "human", "id": f"ui-{n}", "content": text}]}

    added = await client.runs.wait(tid, "keel", input=said("Add buy milk", 1), context=user)
    shown = [(m["type"], m["content"]) for m in added["messages"] if m["type"] != "tool"]
    assert shown[0] == ("human", "Add buy milk") and added["messages"][0]["id"] == "ui-1"
    assert shown[-1] == ("ai", "Created task: buy milk")
    await client.runs.wait(tid, "keel", input=said("Add call mom", 2), context=user)
    await client.runs.wait(tid, "keel", input=said("Delete task 1", 3), context=user)
    paused = await client.threads.get_state(tid)
    (asked,) = paused["interrupts"][0]["value"]["action_requests"]
    assert asked["name"] == "delete_todo_task" and asked["args"] == {"task_id": 1}
    approved = await client.runs.wait(
        tid, "keel", command=Command(resume={"decisions": [{"type": "approve"}]}), context=user
    )
    assert approved["messages"][-1]["content"] == "Deleted task 1: buy milk"
    await client.runs.wait(tid, "keel", input=said("Delete task 2", 4), context=user)
    typed = await client.runs.wait(tid, "keel", input=said("yes", 5), context=user)
    texts = [m["content"] for m in typed["messages"] if m["type"] != "tool" and m["content"]]
    assert texts[-4:] == [
        "Delete task 2",
        "Are you sure you want to delete task 2? (yes/no)\nDelete task 2 - call mom",
        "yes",
        "Deleted task 2: call mom",
    ]
    assert not any("DONE" in str(m["content"]) for m in typed["messages"])
    state = await client.threads.get_state(tid)
    assert not state["interrupts"] and state["values"]["messages"] == typed["messages"]


async def test_an_unclear_answer_then_yes_keeps_each_answer_under_its_question(langgraph_dev):
    client = get_client(url=langgraph_dev)
    user = {"user_id": "studio-unclear"}
    tid = (await client.threads.create())["thread_id"]

    def said(text: str) -> dict:
        return {"messages": [{"type": "human", "content": text}]}

    await client.runs.wait(tid, "keel", input=said("Add buy milk"), context=user)
    asked = await client.runs.wait(tid, "keel", input=said("Delete task 1"), context=user)
    question = "Are you sure you want to delete task 1? (yes/no)\nDelete task 1 - buy milk"
    assert asked["__interrupt__"][0]["value"]["question"] == question
    again = await client.runs.wait(tid, "keel", input=said("maybe"), context=user)
    assert again["__interrupt__"][0]["value"]["question"] == f"{AGAIN} {question}"
    done = await client.runs.wait(tid, "keel", input=said("yes"), context=user)
    shown = [m["content"] for m in done["messages"] if m["type"] != "tool" and m["content"]]
    assert shown[-6:] == [
        "Delete task 1",
        question,
        "maybe",
        f"{AGAIN} {question}",
        "yes",
        "Deleted task 1: buy milk",
    ]


async def test_command_resume_after_a_rename_elsewhere_puts_it_again_then_approves(langgraph_dev):
    """Studio or the SDK answers a question whose task another thread renamed meanwhile."""
    client = get_client(url=langgraph_dev)
    user = {"user_id": "studio-changed"}
    first, other = [(await client.threads.create())["thread_id"] for _ in range(2)]
    await client.runs.wait(first, "keel", input={"content": "Add book dentist"}, context=user)
    await client.runs.wait(first, "keel", input={"content": "Delete task 1"}, context=user)
    await client.runs.wait(
        other, "keel", input={"content": "Rename task 1 to call the dentist"}, context=user
    )
    await client.runs.wait(other, "keel", command=Command(resume="yes"), context=user)
    again = await client.runs.wait(first, "keel", command=Command(resume="yes"), context=user)
    put = again["__interrupt__"][0]["value"]
    assert put["question"].startswith("This changed since I asked")
    assert put["action_requests"][0]["description"] == "Delete task 1 - call the dentist"
    done = await client.runs.wait(
        first, "keel", command=Command(resume={"decisions": [{"type": "approve"}]}), context=user
    )
    assert done["messages"][-1]["content"] == "Deleted task 1: call the dentist"
    state = await client.threads.get_state(first)
    assert not state["interrupts"]
    added = await client.runs.wait(first, "keel", input={"content": "Add eggs"}, context=user)
    assert added["messages"][-1]["content"] == "Created task: eggs"


@pytest.mark.parametrize("decision", ["approve", "reject"])
async def test_a_reply_regenerated_after_the_card_is_the_same_reply(langgraph_dev, decision):
    """Agent Chat UI's regenerate after Approve or Reject: the turn goes on, nothing asked again."""
    client = get_client(url=langgraph_dev)
    user = {"user_id": f"studio-regenerate-{decision}"}
    tid = (await client.threads.create())["thread_id"]
    said = [{"type": "human", "content": "Add buy milk"}]
    await client.runs.wait(tid, "keel", input={"messages": said}, context=user)
    said = [{"type": "human", "content": "Delete task 1"}]
    await client.runs.wait(tid, "keel", input={"messages": said}, context=user)
    resume = Command(resume={"decisions": [{"type": decision}]})
    done = await client.runs.wait(tid, "keel", command=resume, context=user)
    reply = done["messages"][-1]
    history = await client.threads.get_history(tid, limit=10)
    first = [s for s in history if reply["id"] in {m["id"] for m in s["values"]["messages"]}][-1]
    again = await client.runs.wait(  # what the UI sends: no input, from the reply's parent
        tid, "keel", input=None, checkpoint=first["parent_checkpoint"], context=user
    )
    assert not again.get("__interrupt__")
    assert [m["content"] for m in again["messages"][-4:]] == [
        m["content"] for m in done["messages"][-4:]
    ]


async def test_everyday_words_and_one_question_for_several_under_the_langgraph_server(
    langgraph_dev,
):
    client = get_client(url=langgraph_dev)
    user = {"user_id": "studio-words"}
    tid = (await client.threads.create())["thread_id"]

    async def say(text):
        return _texts(await client.runs.wait(tid, "keel", input={"content": text}, context=user))

    assert (await say("could you put eggs, milk and bread on my list please"))[-1] == (
        "Created task: eggs\nCreated task: milk\nCreated task: bread"
    )
    assert (await say("how many tasks do I have?"))[-1] == "You have 3 tasks, all open."
    assert (await say("bought the milk"))[-1] == "Completed task: milk"
    await say("get rid of the egg one and the bread one")
    paused = await client.threads.get_state(tid)
    asked = paused["interrupts"][0]["value"]["action_requests"]
    assert [a["args"]["task_id"] for a in asked] == [1, 3]
    run = await client.runs.wait(tid, "keel", command=Command(resume="go ahead"), context=user)
    assert _texts(run)[-1] == "Deleted task 1: eggs\nDeleted task 3: bread"


@pytest.mark.parametrize("subgraphs", [True, False], ids=["as-studio", "sdk-default"])
async def test_the_streams_carry_updates_events_and_only_assistant_text(langgraph_dev, subgraphs):
    client = get_client(url=langgraph_dev)
    tid = (await client.threads.create())["thread_id"]
    parts = [
        part
        async for part in client.runs.stream(
            tid,
            "keel",
            input={"content": "Add call mom"},
            context={"user_id": f"studio-stream-{subgraphs}"},
            stream_mode=["updates", "custom", "messages"],
            stream_subgraphs=subgraphs,  # Studio streams the steps inside the turn
        )
    ]
    if subgraphs:
        updated = [next(iter(p.data)) for p in _of(parts, "updates") if "|" in p.event]
        # a first message: no plan to end, so the graph goes past reset
        assert updated[:3] == ["user_input", "topic_detect", "plan"]
        assert {"assistant", "tool_execution", "response"} <= set(updated)
    else:  # the graph's own steps; keel's events and the tokens all the same
        assert {next(iter(p.data)) for p in _of(parts, "updates")} == {"turn"}
    custom = [p.data for p in _of(parts, "custom")]
    rounds = [e["data"] for e in custom if e["type"] == "round_started"]
    assert rounds == [{"round": 0, "attempt": 0}, {"round": 1, "attempt": 0}]
    events = [e for e in custom if e["type"] != "round_started"]
    assert {"type": "tool_call", "data": events[-1]["data"]} in events
    assert events[-1]["data"]["name"] == "create_todo_task"
    messages = [m for p in parts if p.event.startswith("messages/") for m in p.data]
    chunks = [m for m in messages if isinstance(m, dict) and "type" in m]
    assert chunks and {m["type"] for m in chunks} == {"ai"}  # no user, tool or remove messages
    assert not any("DONE" in str(m["content"]) for m in chunks)
    assert any(m["content"] == "Created task: call mom" for m in chunks)


SCRIPT = [
    "Add buy milk",
    "Add call mom",
    "What's on my list?",
    "Rename task 2 to call dad",
    "yes",
    "Delete task 1",
    "no",
    "Complete 2",
    "Show task 2",
    "Delete task 1, yes I'm sure",
    "What's on my list?",
]


def _reply(values: dict) -> str:
    interrupts = values.get("__interrupt__") or []
    if interrupts:
        return interrupts[0]["value"]["question"]
    window = convert_to_messages(values.get("window", []))
    last = next(m for m in reversed(window) if isinstance(m, AIMessage))
    return "\n".join(p for p in (last.text, values.get("turn_note")) if p)


async def test_remote_graph_replies_as_keel_serve_does(langgraph_dev, tmp_path):
    remote = RemoteGraph("keel", url=langgraph_dev)
    tid = (await get_client(url=langgraph_dev).threads.create())["thread_id"]
    config = {"configurable": {"thread_id": tid}}
    remote_replies = []
    for message in SCRIPT:
        values = await remote.ainvoke({"content": message}, config, context={"user_id": "remote"})
        remote_replies.append(_reply(values))

    with keel_server(f"sqlite:///{tmp_path / 'keel.db'}") as server:
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as http:
            cid = (await http.post("/v1/conversations", json={})).json()["conversation_id"]
            served = []
            for message in SCRIPT:
                answer = await http.post(
                    f"/v1/conversations/{cid}/messages", json={"content": message}
                )
                served.append(answer.json()["reply"])
    assert remote_replies == served
    assert served[3] == (
        "Are you sure you want to rename task 2? (yes/no)\nRename task 2: call mom -> call dad"
    )
    assert served[4:7] == [
        "Renamed task 2 to: call dad",
        "Are you sure you want to delete task 1? (yes/no)\nDelete task 1 - buy milk",
        "Cancelled: task 1 was not deleted.",
    ]
    assert served[-1] == "Your tasks:\n- [x] 2. call dad"


async def test_an_unannounced_shift_and_a_return_under_the_langgraph_server(langgraph_dev):
    client = get_client(url=langgraph_dev)
    tid = (await client.threads.create())["thread_id"]
    user = {"user_id": "drifter"}
    topics = []
    for text in [
        "Do you know a good way to stop a puppy chewing shoes?",
        "She ignores her chew toys and goes for my sneakers.",
        "What kind of music do you listen to while you work?",
        "Anyway, back to the puppy: would a crate at night help?",
    ]:
        values = await client.runs.wait(tid, "keel", input={"content": text}, context=user)
        topics.append(values["topic"]["id"])
    puppy, same, music, back = topics
    assert same == puppy and music != puppy and back == puppy


@pytest.mark.parametrize("way", ["typed", "command"])
async def test_a_reset_under_the_langgraph_server_drops_the_waiting_delete(langgraph_dev, way):
    client = get_client(url=langgraph_dev)
    user = {"user_id": f"studio-reset-{way}"}
    tid = (await client.threads.create())["thread_id"]
    await client.runs.wait(tid, "keel", input={"content": "Add buy milk"}, context=user)
    await client.runs.wait(tid, "keel", input={"content": "Delete task 1"}, context=user)
    assert (await client.threads.get_state(tid))["next"] == ["turn"]
    reset = {"content": "/reset"} if way == "typed" else {"command": "reset"}
    done = await client.runs.wait(tid, "keel", input=reset, context=user)
    assert _texts(done)[-1] == RESET_MESSAGE
    assert done["mission"] is None and done["todolist"] is None
    assert done["topic"]["title"] == "Reset - New Conversation"
    state = await client.threads.get_state(tid)
    assert state["next"] == [] and not state["interrupts"]
    assert state["values"]["agent_state"] == "response"
    assert state["values"]["audit"][-1]["reason"] == "user_requested"
    later = await client.runs.wait(tid, "keel", input={"content": "yes"}, context=user)
    assert "Deleted" not in _texts(later)[-1]
    listed = await client.runs.wait(
        tid, "keel", input={"content": "What's on my list?"}, context=user
    )
    assert "buy milk" in _texts(listed)[-1]  # the task still exists


@pytest.mark.parametrize("way", ["typed", "command"])
async def test_a_reset_streams_its_events_under_the_langgraph_server(langgraph_dev, way):
    client = get_client(url=langgraph_dev)
    user = {"user_id": f"studio-reset-stream-{way}"}
    tid = (await client.threads.create())["thread_id"]
    await client.runs.wait(tid, "keel", input={"content": "Add call mom"}, context=user)
    parts = [
        part
        async for part in client.runs.stream(
            tid,
            "keel",
            input={"content": "/reset"} if way == "typed" else {"command": "reset"},
            context=user,
            stream_mode=["updates", "custom"],
            stream_subgraphs=True,
        )
    ]
    assert [next(iter(p.data)) for p in _of(parts, "updates") if "|" in p.event] == [
        "user_input",
        "reset_conversation",
    ]
    custom = [p.data for p in _of(parts, "custom")]
    assert [e["type"] for e in custom] == ["topic_changed", "state_updated"]
    assert custom[0]["data"]["reason"] == "user_reset"
    assert custom[1]["data"]["reason"] == "user_requested"


async def test_reopen_by_input_under_the_langgraph_server(langgraph_dev):
    client = get_client(url=langgraph_dev)
    user = {"user_id": "studio-reopen"}
    tid = (await client.threads.create())["thread_id"]
    first = await client.runs.wait(tid, "keel", input={"content": "Add buy bread"}, context=user)
    await client.runs.wait(
        tid, "keel", input={"content": "Let's discuss the garden plans"}, context=user
    )
    back = await client.runs.wait(
        tid, "keel", input={"command": "reopen", "topic_id": first["topic"]["id"]}, context=user
    )
    assert _texts(back)[-1] == "Back to the topic: Add buy bread"
    assert back["topic"]["id"] == first["topic"]["id"]
    nxt = await client.runs.wait(tid, "keel", input={"content": "What's on my list?"}, context=user)
    assert nxt["topic"]["id"] == first["topic"]["id"]
