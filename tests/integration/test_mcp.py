"""The todo tools over MCP (streamable HTTP) on a real server, with per-user keys."""

import json
import time
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import McpError
from mcp.types import ErrorData

from keel.api.mcp import DATABASE_DOWN, DATABASE_UNAVAILABLE
from keel.tools.tasks.todo import TODO_TOOLS
from tests.conftest import new_postgres_database
from tests.integration.conftest import ANN, BOB, KEYS
from tests.integration.server import Server, keel_server
from tests.integration.test_api_processes import database_down


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    db = f"sqlite:///{tmp_path_factory.mktemp('mcp') / 'k.db'}"
    with keel_server(db, KEEL_API_KEYS=KEYS) as running:
        yield running


@asynccontextmanager
async def session_of(server, headers):
    """An MCP client session on the server, its requests carrying ``headers``."""
    http = httpx.AsyncClient(headers=dict(headers), timeout=30)
    async with http, streamable_http_client(f"{server.url}/mcp/", http_client=http) as (r, w, _):
        async with ClientSession(r, w) as session:
            await session.initialize()
            yield session


async def call(server, headers, name, **args):
    async with session_of(server, headers) as session:
        if name == "__list__":
            return [t.name for t in (await session.list_tools()).tools]
        if name == "__tools__":
            return (await session.list_tools()).tools
        return await session.call_tool(name, args)


async def call_error(server, headers, name, **args) -> ErrorData | None:
    """The JSON-RPC error a tool call is answered with, as an SDK client raises it; None: none."""
    async with session_of(server, headers) as session:
        try:
            await session.call_tool(name, args)
        except McpError as exc:  # this call failed; the session goes on
            return exc.error
    return None


async def test_the_documented_client_example_runs(tmp_path):
    text = (Path(__file__).resolve().parents[2] / "docs" / "api.md").read_text()
    example = text.split("## MCP", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    with keel_server(f"sqlite:///{tmp_path / 'k.db'}", KEEL_API_KEYS=KEYS) as own:
        example = example.replace("http://127.0.0.1:8000", own.url)
        body = "".join(f"    {line}\n" for line in example.splitlines())
        scope: dict = {}
        exec(f"async def example():\n{body}", scope)  # noqa: S102 - the docs' own code
        await scope["example"]()
        listed = await call(own, ANN, "list_todo_tasks")
    assert "buy milk" in listed.content[0].text


def payload(result):
    return json.loads(result.content[0].text)


async def test_the_todo_tools_are_listed(server):
    names = await call(server, ANN, "__list__")
    assert sorted(names) == sorted(
        [
            "create_todo_task",
            "get_todo_task",
            "list_todo_tasks",
            "find_todo_tasks",
            "update_todo_task",
            "schedule_todo_task",
            "complete_todo_task",
            "delete_todo_task",
            "list_todo_lists",
            "repeat_todo_task",
            "move_todo_task",
            "clear_todo_list",
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
    assert payload(await call(server, BOB, "list_todo_tasks"))["tasks"] == []
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


def server_log(server: Server) -> str:
    """All the server wrote so far: keel_server's output file, read through the child's stdout."""
    return Path(f"/proc/{server.process.pid}/fd/1").read_text(errors="replace")


RAW_HEADERS = {**ANN, "Accept": "application/json, text/event-stream"}


def post_raw(server: Server, body: bytes) -> httpx.Response:
    """POST ``body`` to /mcp/ as an MCP client would (JSON or not); no traceback may be logged."""
    before = len(server_log(server))
    answer = httpx.post(
        f"{server.url}/mcp/",
        content=body,
        headers={**RAW_HEADERS, "Content-Type": "application/json"},
        timeout=60,
    )
    assert "Traceback" not in server_log(server)[before:]
    return answer


def tool_call(name: str, arguments: dict, request_id: int = 7) -> bytes:
    """A tools/call request; json.dumps writes a lone surrogate as its escape, "\\ud800"."""
    params = {"name": name, "arguments": arguments}
    body = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    return json.dumps(body).encode()


def refused(answer: httpx.Response, status: int, code: int, says: str, request_id=None) -> None:
    assert answer.status_code == status, answer.text
    body = answer.json()
    assert body["error"]["code"] == code and says in body["error"]["message"], body
    if request_id is not None:
        assert body["id"] == request_id  # the request's own error: its client sees that call fail


HUGE = b"9" * 100_000


def test_a_body_nested_too_deep_is_a_parse_error(server):
    answer = post_raw(server, b"[" * 100_000 + b"]" * 100_000)
    refused(answer, 400, -32700, "nested more than 64 levels deep")
    inside = tool_call("create_todo_task", {"title": 0}).replace(b"0", b"[" * 70 + b"]" * 70)
    refused(post_raw(server, inside), 400, -32700, "nested more than 64 levels deep")


def test_a_body_that_is_not_utf8_is_a_parse_error(server):
    body = tool_call("create_todo_task", {"title": "milk"}).replace(b"milk", b"\xff\xfe milk")
    refused(post_raw(server, body), 400, -32700, "the body is not UTF-8")


def test_a_huge_number_in_the_message_is_an_invalid_request(server):
    body = b'{"jsonrpc": "2.0", "id": ' + HUGE + b', "method": "ping"}'
    refused(post_raw(server, body), 400, -32600, "a number has more than 4300 digits")


def test_a_huge_number_in_a_tool_argument_is_invalid_params(server):
    body = tool_call("get_todo_task", {"task_id": 0}).replace(b"0}", HUGE + b"}")
    answer = post_raw(server, body)
    refused(answer, 200, -32602, "a number has more than 4300 digits", request_id=7)


@pytest.mark.parametrize(
    "name, arguments",
    [
        ("get_todo_task\ud800", {"task_id": 1}),
        ("create_todo_task", {"title": "milk \ud800"}),
        ("create_todo_task", {"title\ud800": "milk"}),
    ],
    ids=["tool-name", "argument", "argument-name"],
)
def test_a_lone_surrogate_in_a_tool_call_is_invalid_params(server, name, arguments):
    body = tool_call(name, arguments)
    assert b"\\ud800" in body
    answer = post_raw(server, body)
    refused(answer, 200, -32602, "lone surrogate", request_id=7)
    listed = post_raw(server, tool_call("list_todo_tasks", {}))
    assert "milk" not in listed.text  # nothing was created


async def test_the_server_serves_on_after_hostile_bodies(server):
    for body in (b"[" * 100_000, b"\xff", b'{"id": ' + HUGE + b"}", tool_call("x\ud800", {})):
        assert post_raw(server, body).status_code in (200, 400)
    created = payload(await call(server, ANN, "create_todo_task", title="after the storm"))
    assert created["title"] == "after the storm"


async def test_a_database_outage_is_a_clear_error_without_postgresqls_text(postgres_server):
    db = new_postgres_database(postgres_server)
    name = db.rsplit("/", 1)[1]
    env = {"KEEL_API_KEYS": KEYS, "KEEL_DB_POOL_TIMEOUT_SECONDS": "1"}
    with keel_server(db, **env) as pg_server:
        payload(await call(pg_server, ANN, "create_todo_task", title="before"))
        with database_down(postgres_server, name):
            for tool, arguments in [("create_todo_task", {"title": "x"}), ("list_todo_tasks", {})]:
                answer = post_raw(pg_server, tool_call(tool, arguments))
                assert answer.status_code == 200, answer.text
                assert answer.json() == {
                    "jsonrpc": "2.0",
                    "id": 7,
                    "error": {
                        "code": DATABASE_UNAVAILABLE,
                        "message": DATABASE_DOWN,
                        "data": {"code": "database_unavailable", "retry_after": 1},
                    },
                }
            seen = await call_error(pg_server, ANN, "list_todo_tasks")  # as an SDK client sees it
            assert seen is not None and seen.message == DATABASE_DOWN
        assert "Traceback" not in server_log(pg_server)
        deadline = time.monotonic() + 30
        while await call_error(pg_server, ANN, "list_todo_tasks") is not None:
            assert time.monotonic() < deadline, "the database did not come back"
        back = payload(await call(pg_server, ANN, "list_todo_tasks"))
        assert [t["title"] for t in back["tasks"]] == ["before"]


async def test_find_reads_tasks_by_what_they_are_and_only_the_callers(server):
    """Last in the module: it leaves a task for each of the two users."""
    await call(server, ANN, "create_todo_task", title="book the dentist")
    await call(server, BOB, "create_todo_task", title="dentist for bob")
    found = payload(await call(server, ANN, "find_todo_tasks", descriptions=["dentists"]))
    [entry] = found["found"]
    assert [t["title"] for t in entry["tasks"]] == ["book the dentist"]
