"""A tool declared in one place: one declared here works everywhere keel uses tools.

``set_due_date`` is declared in this file alone, the way keel's own tools are, and handed to the
app with the todo tools. Over HTTP (an in-process uvicorn serving ``create_app(tools=...)``), the
offline model recognises it, the plan lists it, the question before it is asked and answered,
the reply is worded as declared, the system prompt carries its line, and MCP serves and runs it.
"""

import asyncio
from collections.abc import AsyncIterator
from typing import Annotated, Any

import httpx
import pytest
import uvicorn
from langchain_core.tools import InjectedToolArg
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from keel.api.app import create_app
from keel.graphs.settings import Settings
from keel.nodes.models.chat import system_prompt
from keel.tools.spec import Confirm, keel_tool
from keel.tools.store import TaskStore
from keel.tools.todo import TODO_TOOLS
from tests.integration.server import free_port


@keel_tool(
    mutates=True,
    confirm=Confirm("reschedule", "rescheduled"),
    phrasings=[r"^(?:set|change) the due date of {task} to (?P<due>.+)$"],
    reply="Task {id} is now due {due}: {title}",
    prompt="set_due_date takes the date in the user's own words.",
    example='set a due date ("Set the due date of task 2 to Friday")',
)
async def set_due_date(
    task_id: int,
    due: str,
    user_id: Annotated[str, InjectedToolArg],
    store: Annotated[TaskStore, InjectedToolArg],
) -> dict[str, Any]:
    """Set when a task is due (the date as the user says it)."""
    task = await store.get(user_id, task_id)
    renamed = await store.rename(user_id, task_id, f"{task['title']} (due {due})")
    return {**renamed, "due": due}


TOOLS = [*TODO_TOOLS, set_due_date]


@pytest.fixture
async def keel_url(tmp_path) -> AsyncIterator[str]:
    port = free_port()
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'keel.db'}", port=port)
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
        assert 'set a due date ("Set the due date of task 2 to Friday")' in helped["reply"]

        asked = await say("Set the due date of task 1 to Friday")
        waiting = asked["awaiting_confirmation"]
        changes = waiting.pop("changes")
        assert waiting == {
            "action": "reschedule",
            "task_id": 1,
            "task_ids": [1],
            "prompt": "Are you sure you want to reschedule task 1? (yes/no)",
        }
        assert [c["text"] for c in changes] == ["Reschedule task 1 - buy milk"]
        assert [i["tool"] for i in asked["todolist"]["items"]] == ["set_due_date"]

        done = await say("yes")
        assert done["reply"] == "Task 1 is now due Friday: buy milk (due Friday)"
        assert done["tool_calls"][0]["name"] == "set_due_date"
        assert done["todolist"]["items"][0]["status"] == "done"

        refused = await say("Set the due date of task 1 to Monday")
        assert refused["awaiting_confirmation"]["action"] == "reschedule"
        kept = await say("no")
        assert "Cancelled: task 1 was not rescheduled." in kept["reply"]
        tasks = (await http.get("/v1/tasks")).json()
        assert [t["title"] for t in tasks] == ["buy milk (due Friday)"]


async def test_a_tool_declared_once_is_served_over_mcp(keel_url):
    async with streamable_http_client(f"{keel_url}/mcp/") as (read, write, _):
        async with ClientSession(read, write) as session:
            await session.initialize()
            listed = {t.name: t for t in (await session.list_tools()).tools}
            assert list(listed) == [t.name for t in TOOLS]
            schema = set_due_date.tool_call_schema.model_json_schema()
            assert listed["set_due_date"].inputSchema["properties"] == schema["properties"]
            created = await session.call_tool("create_todo_task", {"title": "call mom"})
            assert not created.isError
            due = await session.call_tool("set_due_date", {"task_id": 1, "due": "today"})
            assert not due.isError, due.content
            assert '"due": "today"' in due.content[0].text


def test_the_system_prompt_carries_the_tools_lines():
    prompt = system_prompt(TOOLS)
    assert "set_due_date takes the date in the user's own words." in prompt
    assert "update_todo_task, delete_todo_task, set_due_date ask the user for a yes" in prompt
