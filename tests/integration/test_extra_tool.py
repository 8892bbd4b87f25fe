"""A tool declared in one place: one declared here works everywhere keel uses tools.

``set_task_room`` is declared in one file alone (``tests/extra_tools.py``), the way keel's own
tools are, and handed to keel with the todo tools. Over HTTP (an in-process uvicorn serving
``create_app(tools=...)``), the offline model recognises it, the plan lists it, the question before
it is asked and answered, the reply is worded as declared, the system prompt carries its line, and
MCP serves and runs it. Named once on the command line (``--tools module:attribute``) or in the
settings (``KEEL_TOOLS``), it reaches ``keel serve``'s workers, ``keel chat`` and a LangGraph
server's runs.
"""

import asyncio
import re
import subprocess
import sys
import tempfile
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from keel.api.app import create_app
from keel.graphs.assembly import ToolsNotLoaded, load_tools
from keel.graphs.builder import served
from keel.graphs.resources import close_shared_resources, shared_resources
from keel.graphs.settings import Settings
from keel.nodes.models.chat import system_prompt
from tests.extra_tools import TOOLS, add_room_column, set_task_room
from tests.integration.server import free_port, say, stop, wait_until_ready
from tests.keel_process import ROOT, keel_env


@pytest.fixture
async def keel_url(tmp_path) -> AsyncIterator[str]:
    port = free_port()
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'keel.db'}", port=port)
    await add_room_column(settings.database_url)
    config = uvicorn.Config(
        create_app(settings, tools=TOOLS), host="127.0.0.1", port=port, log_level="warning"
    )
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve())
    while not server.started:
        assert not serving.done(), "the server did not start"
        await asyncio.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    await serving


async def test_a_tool_declared_once_works_through_the_offline_model_and_a_confirmation(keel_url):
    async with httpx.AsyncClient(base_url=keel_url, timeout=30) as http:
        cid = (await http.post("/v1/conversations", json={})).json()["conversation_id"]

        async def say(text: str) -> dict[str, Any]:
            answer = await http.post(f"/v1/conversations/{cid}/messages", json={"content": text})
            assert answer.status_code == 200, answer.text
            return answer.json()

        assert (await say("Add buy milk"))["reply"] == "Created task: buy milk"
        helped = await say("What can you do?")
        assert 'set a room ("Set the room of task 2 to the office")' in helped["reply"]

        asked = await say("Set the room of task 1 to the office")
        waiting = asked["awaiting_confirmation"]
        changes = waiting.pop("changes")
        assert waiting == {
            "action": "move",
            "task_id": 1,
            "task_ids": [1],
            "prompt": ("Are you sure you want to move task 1? (yes/no)\nMove task 1 - buy milk"),
        }
        assert [c["text"] for c in changes] == ["Move task 1 - buy milk"]
        assert [i["tool"] for i in asked["todolist"]["items"]] == ["set_task_room"]

        done = await say("yes")
        assert done["reply"] == "Task 1 is now in the office: buy milk"
        assert done["tool_calls"][0]["name"] == "set_task_room"
        assert done["todolist"]["items"][0]["status"] == "done"

        refused = await say("Set the room of task 1 to the garage")
        assert refused["awaiting_confirmation"]["action"] == "move"
        kept = await say("no")
        assert "Cancelled: task 1 was not moved." in kept["reply"]
        tasks = (await http.get("/v1/tasks")).json()
        assert [(t["title"], t["room"]) for t in tasks] == [("buy milk", "the office")]
        assert (await http.get("/v1/tasks/1")).json()["room"] == "the office"


async def test_a_tool_declared_once_is_served_over_mcp(keel_url):
    async with streamable_http_client(f"{keel_url}/mcp/") as (read, write, _):
        async with ClientSession(read, write) as session:
            await session.initialize()
            listed = {t.name: t for t in (await session.list_tools()).tools}
            assert list(listed) == [t.name for t in TOOLS]
            schema = set_task_room.tool_call_schema.model_json_schema()
            assert listed["set_task_room"].inputSchema["properties"] == schema["properties"]
            created = await session.call_tool("create_todo_task", {"title": "call mom"})
            assert not created.isError
            placed = await session.call_tool("set_task_room", {"task_id": 1, "room": "home"})
            assert not placed.isError, placed.content
            assert '"room": "home"' in placed.content[0].text


def test_the_system_prompt_carries_the_tools_lines():
    prompt = system_prompt(TOOLS)
    assert "set_task_room takes the room in the user's own words." in prompt
    assert (
        "update_todo_task, schedule_todo_task, clear_todo_list, delete_todo_task, set_task_room "
        "ask the user for a yes" in prompt
    )


KEEL_SCRIPT = str(Path(sys.executable).parent / "keel")
"""The console script, as a person runs it (its own folder first on its path, not the current)."""
NAMED = "tests.extra_tools:TOOLS"


def test_keel_serve_gives_the_tools_named_on_its_command_line_to_its_workers(tmp_path):
    # with --workers 2 every worker is a process uvicorn spawned, whichever one answers
    asyncio.run(add_room_column(f"sqlite:///{tmp_path / 'keel.db'}"))
    port = free_port()
    output = tempfile.TemporaryFile(mode="w+")
    process = subprocess.Popen(
        [KEEL_SCRIPT, "serve", "--tools", NAMED, "--port", str(port), "--workers", "2"],
        stdout=output,
        stderr=subprocess.STDOUT,
        text=True,
        env=keel_env(f"sqlite:///{tmp_path / 'keel.db'}"),
        cwd=ROOT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_ready(process, f"{url}/readyz", output, "keel serve")
        cid = httpx.post(f"{url}/v1/conversations", json={}).json()["conversation_id"]
        assert say(url, cid, "Add buy milk", status=200).json()["reply"] == "Created task: buy milk"
        asked = say(url, cid, "Set the room of task 1 to the office", status=200).json()
        assert asked["awaiting_confirmation"]["action"] == "move"
        done = say(url, cid, "yes", status=200).json()
        assert done["reply"] == "Task 1 is now in the office: buy milk"
        assert httpx.get(f"{url}/v1/tasks").json()[0]["room"] == "the office"
    finally:
        stop(process)
        output.close()


def test_keel_chat_gives_the_tools_named_on_its_command_line(tmp_path):
    asyncio.run(add_room_column(f"sqlite:///{tmp_path / 'keel.db'}"))
    typed = "Add buy milk\nSet the room of task 1 to the office\nyes\n"
    chat = subprocess.run(
        [KEEL_SCRIPT, "chat", "--tools", NAMED],
        input=typed,
        capture_output=True,
        text=True,
        env=keel_env(f"sqlite:///{tmp_path / 'keel.db'}"),
        cwd=ROOT,
        timeout=180,
    )
    assert chat.returncode == 0, chat.stderr
    assert "Are you sure you want to move task 1? (yes/no)" in chat.stdout
    assert "Task 1 is now in the office: buy milk" in chat.stdout


@pytest.mark.parametrize(
    ("command", "named", "said"),
    [
        ("chat", "nowhere:TOOLS", "tools 'nowhere:TOOLS': cannot import nowhere"),
        (
            "serve",
            "keel.tools.tasks.todo:NONE",
            "tools 'keel.tools.tasks.todo:NONE': keel.tools.tasks.todo has no",
        ),
        (
            "telegram",
            "keel.tools.tasks.todo",
            "tools 'keel.tools.tasks.todo': write them as module:attribute",
        ),
        ("chat", "keel.graphs.settings:Settings", "not a list of LangChain tools"),
    ],
)
def test_tools_that_cannot_be_loaded_stop_the_command_with_a_clear_error(
    tmp_path, command, named, said
):
    refused = subprocess.run(
        [KEEL_SCRIPT, command, "--tools", named],
        input="",
        capture_output=True,
        text=True,
        env=keel_env(f"sqlite:///{tmp_path / 'keel.db'}", KEEL_TELEGRAM_TOKEN="1:x"),
        cwd=ROOT,
        timeout=120,
    )
    assert refused.returncode == 2
    assert "refusing to start" in refused.stderr
    assert said in " ".join(refused.stderr.split())
    assert not (tmp_path / "keel.db").exists()  # nothing was opened


async def test_a_langgraph_servers_runs_get_the_tools_the_settings_name(tmp_path, monkeypatch):
    monkeypatch.setenv("KEEL_TOOLS", NAMED)
    monkeypatch.setenv("KEEL_DATABASE_URL", f"sqlite:///{tmp_path / 'keel.db'}")
    await add_room_column(f"sqlite:///{tmp_path / 'keel.db'}")
    studio = served(checkpointer=InMemorySaver())  # as langgraph dev runs it: plain data only
    thread = {"configurable": {"thread_id": str(uuid.uuid4())}}

    async def say(text: str) -> dict[str, Any]:
        return await studio.ainvoke({"messages": [{"role": "user", "content": text}]}, thread)

    try:
        await say("Add buy milk")
        asked = await say("Set the room of task 1 to the office")
        question = asked["__interrupt__"][0].value
        assert question["question"] == (
            "Are you sure you want to move task 1? (yes/no)\nMove task 1 - buy milk"
        )
        done = await studio.ainvoke(Command(resume="yes"), thread)
        assert done["messages"][-1].content == "Task 1 is now in the office: buy milk"
        assert "set_task_room" in [tool.name for tool in (await shared_resources()).tools]
    finally:
        await close_shared_resources()


def test_load_tools_takes_a_list_a_tool_or_a_function_and_refuses_the_rest():
    assert load_tools(NAMED) == TOOLS
    assert load_tools("tests.extra_tools:set_task_room") == [set_task_room]
    assert load_tools("tests.extra_tools:tools_of") == TOOLS
    for wrong, said in [
        ("tests.extra_tools:CLASHING", "keel's own tools are named ask_user"),
        ("tests.extra_tools:DOUBLED", "two tools are named set_task_room"),
        ("tests.extra_tools:NONE", "not a list of LangChain tools (an empty list)"),
    ]:
        with pytest.raises(ToolsNotLoaded, match=re.escape(said)):
            load_tools(wrong)


def test_a_time_zone_keel_does_not_know_stops_the_start(tmp_path):
    refused = subprocess.run(
        [KEEL_SCRIPT, "chat"],
        input="",
        capture_output=True,
        text=True,
        env=keel_env(f"sqlite:///{tmp_path / 'keel.db'}", KEEL_TIMEZONE="Mars/Base"),
        cwd=ROOT,
        timeout=120,
    )
    assert refused.returncode == 2
    said = " ".join(refused.stderr.split())
    assert "refusing to start: KEEL_TIMEZONE: 'Mars/Base' is not a time zone I know." in said
    assert not (tmp_path / "keel.db").exists()  # nothing was opened
