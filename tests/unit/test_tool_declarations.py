"""What a tool declared with keel_tool may get wrong, and how keel takes it."""

import re
import uuid
from datetime import UTC, datetime
from typing import Annotated, Any

import pytest
from langchain_core.tools import InjectedToolArg

from keel.tools.calls import run_tool_call
from keel.tools.confirm import Confirm
from keel.tools.spec import keel_tool, spec_of
from keel.tools.tasks.store import TaskStore
from keel.tools.tasks.todo import TODO_TOOLS
from tests.helpers import open_database

UserId = Annotated[str, InjectedToolArg]
Store = Annotated[TaskStore, InjectedToolArg]


@pytest.fixture
async def store(database_url):
    async with open_database(database_url) as db:
        yield TaskStore(db)


@keel_tool(mutates=True, reply="Made {name}")
async def make_then_fail(title: str, user_id: UserId, store: Store) -> dict[str, Any]:
    """Create a task, then fail."""
    await store.create(user_id, title)
    raise RuntimeError("the tool's own bug")


@keel_tool()
async def stamp(user_id: UserId, store: Store) -> dict[str, Any]:
    """Say when it is (a value JSON has no type for)."""
    return {"at": datetime(2026, 1, 6, tzinfo=UTC)}


def call(name: str, **args: Any) -> Any:
    return {"name": name, "args": args, "id": f"call_{uuid.uuid4().hex}", "type": "tool_call"}


async def test_a_tool_that_raises_answers_an_error_and_keeps_nothing(store):
    tools = [*TODO_TOOLS, make_then_fail]
    answer = await run_tool_call(call("make_then_fail", title="bread"), "ann", store, tools=tools)
    assert answer.status == "error"
    assert answer.content == (
        "Error: make_then_fail failed (RuntimeError); nothing it would change was kept."
    )
    assert await store.list("ann") == []  # its transaction was rolled back


async def test_a_result_json_cannot_hold_is_written_as_text(store):
    answer = await run_tool_call(call("stamp"), "ann", store, tools=[*TODO_TOOLS, stamp])
    assert answer.status == "success" and answer.content == '{"at": "2026-01-06 00:00:00+00:00"}'


def test_a_reply_that_does_not_fit_the_result_gives_way_to_the_result():
    assert spec_of(make_then_fail).report({"id": 1, "title": "bread"}) is None


def test_a_phrasing_that_is_no_regular_expression_is_refused_when_declared():
    with pytest.raises(re.error):
        keel_tool(phrasings=[r"^move {task} before {task}$"])


def test_a_confirmation_words_its_question_and_refusal():
    confirm = Confirm("archive", "archived", target="list_name", noun="list")
    assert confirm.question({"list_name": "work"}) == (
        "Are you sure you want to archive list work? (yes/no)"
    )
    assert confirm.cancelled({"list_name": "work"}) == "Cancelled: list work was not archived."
