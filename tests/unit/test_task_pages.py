"""Tasks a page at a time: the store, the list tool, and the offline model's lists and lookups.

A user with hundreds of tasks gets a bounded list turn (reply and logged result), can ask for the
next page, and can still name any task by its title. Rerun on PostgreSQL by
tests/integration/test_stores_on_postgres.py.
"""

import json
import uuid

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from keel.graphs.run_turn import run_turn
from keel.nodes.context.recency import render_history
from keel.nodes.models.lookups import next_page_offset
from keel.nodes.models.rule_based import decide
from keel.tools.calls import run_tool_call
from keel.tools.tasks import store as store_module
from keel.tools.tasks.pages import LIST_LIMIT_DEFAULT
from keel.tools.tasks.store import TaskError
from keel.tools.tasks.todo import TODO_TOOLS
from keel.tools.understanding.reading import parse_intents

BOUND = 10_000
"""Bytes a list turn's reply, and its logged tool result, stay under."""
NAMES = TODO_TOOLS


def title(n: int) -> str:
    return f"chore number {n:03d}"


async def fill(keel, count: int, user: str = "local", name=title) -> None:
    """``count`` tasks for ``user``, created through the store in one transaction (fast)."""
    async with keel.db.transaction() as tx:
        store = keel.store.within(tx)
        for n in range(1, count + 1):
            await store.create(user, name(n))


async def say(keel, cid, text, user="local"):
    return await run_turn(keel.graph, cid, text, keel.context(user))


async def invoke(keel, user, **args):
    call = {"name": "list_todo_tasks", "args": args, "id": f"c_{uuid.uuid4().hex}"}
    msg = await run_tool_call({**call, "type": "tool_call"}, user, keel.store, tools=TODO_TOOLS)
    return msg.status, (json.loads(msg.content) if msg.status != "error" else msg.content)


# --- the store -----------------------------------------------------------------------------


async def test_the_store_reads_a_page_by_task_number(keel):
    await fill(keel, 12)
    await fill(keel, 3, user="bob")
    await keel.store.delete("local", 4)
    assert await keel.store.count("local") == 11
    assert await keel.store.count("bob") == 3
    assert await keel.store.count("nobody") == 0
    every = await keel.store.list("local")
    assert [t["id"] for t in every] == [1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12]
    assert [t["id"] for t in await keel.store.list("local", 0, 3)] == [1, 2, 3]
    assert [t["id"] for t in await keel.store.list("local", 3, 3)] == [5, 6, 7]
    assert [t["id"] for t in await keel.store.list("local", 9)] == [11, 12]
    assert await keel.store.list("local", 11, 5) == []
    assert await keel.store.list("local", 2**63 - 1, 1) == []
    assert await keel.store.list("local", 3, 2) == every[3:5]


@pytest.mark.parametrize("offset,limit", [(-1, None), (True, None), (0, 0), (0, -3), (0, False)])
async def test_the_store_refuses_a_bad_page(keel, offset, limit):
    with pytest.raises(TaskError) as refused:
        await keel.store.list("local", offset, limit)
    assert refused.value.code == "invalid_page"


async def test_find_matches_titles_in_any_case_across_batches(keel, monkeypatch):
    monkeypatch.setattr(store_module, "FIND_BATCH", 4)  # several batches for a few tasks
    await fill(keel, 20, name=lambda n: f"Buy MILK {n}" if n % 3 == 0 else f"walk dog {n}")
    await keel.store.create("bob", "buy milk")
    tasks, total = await keel.store.find("local", "buy  milk")
    assert total == 6 and [t["id"] for t in tasks] == [3, 6, 9, 12, 15, 18]
    tasks, total = await keel.store.find("local", "milk", 2, 3)
    assert total == 6 and [t["id"] for t in tasks] == [9, 12, 15]
    assert await keel.store.find("local", "nothing like it") == ([], 0)
    assert (await keel.store.find("local", "MILK 6"))[1] == 1


# --- the tool ------------------------------------------------------------------------------


async def test_the_list_tool_returns_one_page_and_where_it_is(keel):
    await fill(keel, 120)
    status, first = await invoke(keel, "local")
    assert status == "success"
    assert list(first) == ["total", "offset", "next_offset", "tasks"]  # paging first
    assert (first["total"], first["offset"], first["next_offset"]) == (120, 0, LIST_LIMIT_DEFAULT)
    assert [t["id"] for t in first["tasks"]] == list(range(1, 51))
    _, second = await invoke(keel, "local", offset=first["next_offset"], limit=100)
    assert (second["offset"], second["next_offset"]) == (50, None)
    assert [t["id"] for t in second["tasks"]] == list(range(51, 121))
    _, past = await invoke(keel, "local", offset=500)
    assert past == {"total": 120, "offset": 500, "next_offset": None, "tasks": []}
    _, other = await invoke(keel, "bob")
    assert other == {"total": 0, "offset": 0, "next_offset": None, "tasks": []}


@pytest.mark.parametrize(
    "args,problem",
    [
        ({"limit": 101}, "limit: Input should be less than or equal to 100"),
        ({"limit": 0}, "limit: Input should be greater than or equal to 1"),
        ({"offset": -1}, "offset: Input should be greater than or equal to 0"),
        ({"offset": True}, "offset: Value error, a number, not true or false"),
        ({"offset": str(10**20)}, "offset: Input should be less than or equal to"),
    ],
)
async def test_the_list_tool_refuses_a_bad_page(keel, args, problem):
    status, content = await invoke(keel, "local", **args)
    assert status == "error" and content.startswith("Error: invalid arguments for list_todo_tasks")
    assert problem in content


async def test_the_list_tool_filters_by_title(keel):
    await fill(keel, 130, name=lambda n: "milk" if n == 125 else f"milk run {n}")
    _, found = await invoke(keel, "local", title_contains="MILK", limit=100)
    assert list(found)[0] == "title_contains"
    assert (found["total"], found["next_offset"], len(found["tasks"])) == (130, 100, 100)
    _, one = await invoke(keel, "local", title_contains="run 7")
    assert [t["id"] for t in one["tasks"]] == [7] + list(range(70, 80))
    _, blank = await invoke(keel, "local", title_contains="  ", limit=2)
    assert [t["id"] for t in blank["tasks"]] == [1, 2] and "title_contains" not in blank


# --- the offline model ---------------------------------------------------------------------


def test_show_more_and_next_page_are_list_requests_for_more():
    for text in ("show more tasks", "Show more tasks.", "next page", "show me more", "more tasks"):
        [intent] = parse_intents(text, TODO_TOOLS)
        assert intent.tool == "list_todo_tasks" and intent.more, text
    [intent] = parse_intents("What's on my list?", TODO_TOOLS)
    assert not intent.more
    assert [i.args for i in parse_intents("add bread and more", TODO_TOOLS)] == [
        {"title": "bread and more"}
    ]


def test_the_next_page_is_found_in_a_history_cut_short():
    page = {"total": 300, "offset": 50, "next_offset": 100, "tasks": [{"id": 1}] * 200}
    lookup = {"title_contains": "x", "total": 300, "offset": 0, "next_offset": 100, "tasks": []}
    history = [
        {"role": "user", "content": "show more tasks", "at": "", "section": "current"},
        {"role": "tool", "content": f"list_todo_tasks: {json.dumps(page)}"[:1999] + "…",
         "at": "", "section": "current"},
        {"role": "assistant", "content": "Your tasks:\n- [ ] 51. a" + "…", "at": "",
         "section": "current"},
        {"role": "tool", "content": f"list_todo_tasks: {json.dumps(lookup)}", "at": "",
         "section": "current"},
    ]  # fmt: skip
    text = render_history(history, False)
    assert next_page_offset([SystemMessage("prompt"), SystemMessage(text)]) == 100
    shown = 'Your tasks:\n- [ ] 1. a\n(showing 101-150 of 6,700; say "show more tasks" for the…)'
    older = [{"role": "assistant", "content": shown, "at": "", "section": "earlier"}]
    both = render_history(older + history, False)
    assert next_page_offset([SystemMessage(both)]) == 100  # the current section is newer
    assert next_page_offset([SystemMessage(render_history(older, False))]) == 150
    assert next_page_offset([SystemMessage("prompt")]) == 0
    last = {"total": 300, "offset": 250, "next_offset": None, "tasks": []}
    ended = [{"role": "tool", "content": f"list_todo_tasks: {json.dumps(last)}", "at": "",
              "section": "current"}]  # fmt: skip
    assert next_page_offset([SystemMessage(render_history(ended, False))]) == 300


def _found(call, *tasks):
    entry = {"description": call["args"]["descriptions"][0], "tasks": list(tasks), "closest": None}
    return ToolMessage(json.dumps({"found": [entry]}), tool_call_id=call["id"])


def test_a_lookup_finds_the_exact_title_among_similar_ones():
    ask = HumanMessage("complete milk")
    first = decide([ask], NAMES)
    [call] = first.tool_calls
    assert (call["name"], call["args"]) == ("find_todo_tasks", {"descriptions": ["milk"]})
    exact = {"id": 201, "title": "Milk", "completed": False, "score": 2.0}
    near = {"id": 200, "title": "milk run", "completed": False, "score": 1.05}
    [complete] = decide([ask, first, _found(call, exact, near)], NAMES).tool_calls
    assert complete["name"] == "complete_todo_task" and complete["args"] == {"task_id": 201}


def test_a_title_that_matches_several_tasks_and_none_exactly_is_not_guessed():
    ask = HumanMessage("complete milk")
    first = decide([ask], NAMES)
    [call] = first.tool_calls
    tasks = [{"id": n, "title": f"milk {n}", "completed": False, "score": 1.05} for n in (1, 2)]
    answer = decide([ask, first, _found(call, *tasks)], NAMES)
    assert not answer.tool_calls
    assert 'Several tasks match "milk": 1. milk 1, 2. milk 2. Which one?' in answer.text


def test_a_failed_lookup_is_reported_as_it_is():
    ask = HumanMessage("complete milk")
    first = decide([ask], NAMES)
    [call] = first.tool_calls
    failed = ToolMessage("Error: the database is away.", tool_call_id=call["id"], status="error")
    answer = decide([ask, first, failed], NAMES)
    assert not answer.tool_calls and "Error: the database is away." in answer.text


# --- turns over a long list ----------------------------------------------------------------


async def tool_results(keel, cid) -> list[str]:
    return [m.content for m in await keel.messages.page(cid) if m.role == "tool"]


async def test_a_list_turn_over_hundreds_of_tasks_is_one_bounded_page(keel):
    await fill(keel, 300)
    cid = str(uuid.uuid4())
    result = await say(keel, cid, "What's on my list?")
    lines = result.reply.splitlines()
    assert lines[0] == "Your tasks:" and lines[1] == f"- [ ] 1. {title(1)}"
    assert lines[50] == f"- [ ] 50. {title(50)}" and title(51) not in result.reply
    assert lines[-1] == '(showing 1-50 of 300; say "show more tasks" for the next ones)'
    assert len(result.reply.encode()) < BOUND
    assert (
        len(result.model_dump_json().encode()) < 3 * BOUND
    )  # the reply, the tool call, its result
    [logged] = await tool_results(keel, cid)
    assert len(logged.encode()) < BOUND
    page = json.loads(logged)
    assert (page["total"], page["next_offset"], len(page["tasks"])) == (300, 50, 50)


@pytest.mark.parametrize("long_titles", [False, True])
async def test_show_more_tasks_lists_the_next_page(keel, long_titles):
    name = (
        (lambda n: f"{title(n)} " + "and a long story to go with it " * 3) if long_titles else title
    )
    await fill(keel, 120, name=name)  # long titles: the reply is cut short in the model's history
    cid = str(uuid.uuid4())
    await say(keel, cid, "What's on my list?")
    more = await say(keel, cid, "show more tasks")
    assert [c["args"] for c in more.tool_calls] == [{"offset": 50}]
    lines = more.reply.splitlines()
    assert lines[1].startswith(f"- [ ] 51. {title(51)}") and f"{title(50)} " not in more.reply
    assert lines[-1] == '(showing 51-100 of 120; say "show more tasks" for the next ones)'
    last = await say(keel, cid, "next page")
    assert last.reply.splitlines()[-1] == "(showing 101-120 of 120; that was the last of them)"
    assert (await say(keel, cid, "show more tasks")).reply == "No more tasks: you have 120 in all."
    assert "Your tasks:" in (await say(keel, cid, "What's on my list?")).reply


async def test_a_short_list_is_shown_whole_as_before(keel):
    await fill(keel, 3)
    result = await say(keel, str(uuid.uuid4()), "What's on my list?")
    assert result.reply == "Your tasks:\n" + "\n".join(f"- [ ] {n}. {title(n)}" for n in (1, 2, 3))


async def test_a_task_beyond_the_first_page_is_found_by_title(keel):
    await fill(keel, 300)
    cid = str(uuid.uuid4())
    asked = await say(keel, cid, f"Delete {title(250)}")
    assert asked.awaiting_confirmation is not None
    assert asked.awaiting_confirmation["task_id"] == 250
    done = await say(keel, cid, "yes")
    assert done.reply == f"Deleted task 250: {title(250)}"
    assert await keel.store.count("local") == 299
    completed = await say(keel, cid, f"complete {title(299).upper()}")
    assert completed.reply == f"Completed task: {title(299)}"
    assert all(len(r.encode()) < BOUND for r in await tool_results(keel, cid))


async def test_an_exact_title_among_many_similar_ones_is_found(keel):
    await fill(keel, 160, name=lambda n: "milk" if n == 150 else f"milk run {n}")
    result = await say(keel, str(uuid.uuid4()), "complete milk")
    assert result.reply == "Completed task: milk"
    assert (await keel.store.get("local", 150))["completed"]
    lookups = [c["args"] for c in result.tool_calls if c["name"] == "find_todo_tasks"]
    assert lookups == [{"descriptions": ["milk"]}]  # the titles read once


def test_the_rule_model_answers_from_an_ai_page_given_as_messages():
    """A caller that gives earlier turns as messages (not a history text) pages on too."""
    shown = AIMessage('Your tasks:\n- [ ] 1. a\n(showing 1-50 of 70; say "show more tasks" …)')
    [call] = decide([HumanMessage("list"), shown, HumanMessage("next page")], NAMES).tool_calls
    assert call["args"] == {"offset": 50}
