"""The todo tools over MCP (streamable HTTP) on a real server, with per-user keys."""

import json

import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client

from keel.tools.todo import TODO_TOOLS
from tests.integration.conftest import ANN, BOB, KEYS
from tests.integration.server import keel_server


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    db = f"sqlite:///{tmp_path_factory.mktemp('mcp') / 'k.db'}"
    with keel_server(db, KEEL_API_KEYS=KEYS) as running:
        yield running


async def call(server, headers, name, **args):
    async with streamablehttp_client(f"{server.url}/mcp/", headers=dict(headers)) as (r, w, _):
        async with ClientSession(r, w) as session:
            await session.initialize()
            if name == "__list__":
                return [t.name for t in (await session.list_tools()).tools]
            if name == "__tools__":
                return (await session.list_tools()).tools
            return await session.call_tool(name, args)


def payload(result):
    return json.loads(result.content[0].text)


async def test_the_six_tools_are_listed(server):
    names = await call(server, ANN, "__list__")
    assert sorted(names) == sorted(
        [
            "create_todo_task",
            "get_todo_task",
            "list_todo_tasks",
            "update_todo_task",
            "complete_todo_task",
            "delete_todo_task",
        ]
    )


async def test_the_mcp_tools_are_the_agents_tools(server):
    served = {t.name: t for t in await call(server, ANN, "__tools__")}
    assert list(served) == [t.name for t in TODO_TOOLS]
    for todo_tool in TODO_TOOLS:
        mcp_tool = served[todo_tool.name]
        schema = todo_tool.tool_call_schema.model_json_schema()
        assert mcp_tool.description == todo_tool.description
        assert mcp_tool.inputSchema["properties"] == schema["properties"], todo_tool.name
        assert mcp_tool.inputSchema.get("required", []) == schema.get("required", [])


async def test_tools_act_for_the_keys_user_only(server):
    created = payload(await call(server, ANN, "create_todo_task", title="via mcp"))
    assert created["title"] == "via mcp"
    mine = payload(await call(server, ANN, "list_todo_tasks"))
    assert [t["title"] for t in mine["tasks"]] == ["via mcp"]
    assert payload(await call(server, BOB, "list_todo_tasks")) == {"tasks": []}
    stolen = await call(server, BOB, "delete_todo_task", task_id=created["id"])
    assert stolen.isError and f"Task {created['id']} not found." in stolen.content[0].text
    done = payload(await call(server, ANN, "complete_todo_task", task_id=created["id"]))
    assert done["completed"] is True


def test_mcp_without_a_key_is_401(server):
    answer = httpx.post(f"{server.url}/mcp/", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert answer.status_code == 401 and answer.json()["error"]["code"] == "unauthorized"


@pytest.mark.parametrize("task_id", [True, 2**63, 10**20])
async def test_a_task_id_that_is_no_task_is_a_clear_error(server, task_id):
    await call(server, ANN, "create_todo_task", title="only one")
    answer = await call(server, ANN, "get_todo_task", task_id=task_id)
    assert answer.isError
    text = answer.content[0].text
    assert "not found" in text or "not true or false" in text, text
    assert "SQLite" not in text and "too large" not in text
