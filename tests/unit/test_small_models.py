"""The ways small local models misbehave, reproduced by the OpenAI-compatible stub: tool calls
written as text, keel's own words copied back, a step asked for again, a request half done before
a fallback, and a server that refuses content null beside tool calls."""

import json
import uuid

import pytest

from keel.graphs.run_turn import run_turn
from keel.nodes.models.chat import (
    ModelLimits,
    build_agent_model,
    build_title_model,
    system_prompt,
)
from keel.nodes.models.markers import DoneLines
from keel.nodes.models.notes import FALLBACK_NOTE, without_notes
from keel.nodes.models.text_calls import read_calls
from keel.tools.tasks.todo import TODO_TOOLS
from tests.stub_openai import StubOpenAI
from tests.unit.test_model_path import TOOLS, kinds, stubbed, titles

MILK = {"name": "create_todo_task", "arguments": {"title": "buy milk"}}
RAW_SIGNS = ("create_todo_task", "<tool_call>", "functions.", '"arguments"', "```")


def shows_no_raw_call(text: str) -> bool:
    return not any(sign in text for sign in RAW_SIGNS)


@pytest.mark.parametrize(
    "written",
    [
        json.dumps(MILK),
        f"<tool_call>\n{json.dumps(MILK)}\n</tool_call>",
        f"I'll add it.\n<tool_call>{json.dumps(MILK)}",  # the closing tag never came
        f"```json\n{json.dumps(MILK)}\n```",
        f"[{json.dumps(MILK)}]",
        f"{json.dumps(MILK)}\n```\nI will add it.",  # the call, a stray fence, then prose
        f"<tools>\n{json.dumps(MILK)}\n</tools>",
        '{"name": "create_todo_task", "arguments": "{\\"title\\": \\"buy milk\\"}"}',
        'functions.create_todo_task: {"title": "buy milk"}',
        '{{"name": "create_todo_task", "arguments": {"title": "buy milk"}}}',
        '<tools>\n  <create_todo_task title="buy milk"/>\n</tools>',
        '<tool_response>\n<create_todo_task title="buy milk" status="open"/>\n</tool_response>\n'
        '<tool_response>\n{"id": 7, "title": "buy milk"}\n</tool_response>',  # a made-up result
    ],
    ids=[
        "bare",
        "tagged",
        "unclosed",
        "fenced",
        "list",
        "call-then-prose",
        "tools-tag",
        "string-args",
        "functions",
        "doubled",
        "tag-form",
        "made-up-result",
    ],
)
async def test_a_tool_call_written_as_text_runs_as_a_call_and_is_never_shown(memory_keel, written):
    with StubOpenAI() as stub:
        stub.reply(written)
        stub.reply("Added buy milk.\nKEEL DONE: added")
        result = await stubbed(memory_keel, str(uuid.uuid4()), "add buy milk", stub)
        assert len(stub.requests) == 2
    assert await titles(memory_keel) == ["buy milk"]
    assert [c["name"] for c in result.tool_calls] == ["create_todo_task"]
    assert result.complete and result.reply.startswith("Added buy milk.")
    assert shows_no_raw_call(result.reply) and not kinds(result, "model_fallback")


@pytest.mark.parametrize(
    "written",
    [
        '{"name": "create_todo_task", "arguments": {"name": "buy milk"}}',  # not its parameter
        '{"name": "remove_everything", "arguments": {}}',  # not a bound tool
        "functions.create_todo_task:",  # llama-cpp-python's forced text, no arguments
        '<tool_call>{"name": "delete_todo_task", "arguments": {"task_id": "one"}}</tool_call>',
        '<tools>\n  <remove_all_tasks confirm="true"/>\n</tools>',
        "<tools></tools>",
        '{"name": "find_todo_tasks", "arguments": {"descriptions": ["Paris", "London", "Ber',
    ],
    ids=[
        "wrong-parameter",
        "unbound",
        "functions-bare",
        "wrong-type",
        "xml",
        "empty-tags",
        "cut-off",
    ],  # fmt: skip
)
async def test_an_unusable_call_written_as_text_is_asked_for_again_not_shown(memory_keel, written):
    with StubOpenAI() as stub:
        stub.reply(written)
        stub.reply(tool_calls=[{"name": "create_todo_task", "args": {"title": "buy milk"}}])
        stub.reply("Added buy milk.\nKEEL DONE: added")
        result = await stubbed(memory_keel, str(uuid.uuid4()), "add buy milk", stub)
    assert await titles(memory_keel) == ["buy milk"]
    assert result.complete and shows_no_raw_call(result.reply)
    assert not kinds(result, "model_fallback")  # the second answer was usable


async def test_json_that_is_no_call_stays_the_answer(memory_keel):
    answer = 'Here is the shape:\n```json\n{"title": "buy milk", "done": false}\n```'
    with StubOpenAI() as stub:
        stub.reply(f"{answer}\nKEEL DONE: shown")
        result = await stubbed(memory_keel, str(uuid.uuid4()), "what does a task look like?", stub)
    assert result.reply == answer and result.complete and not result.tool_calls


def test_text_calls_read_their_forms_and_leave_prose_alone():
    found = read_calls(
        'Sure.\n{"name": "get_todo_task", "parameters": {"task_id": "3"}}', TODO_TOOLS
    )
    assert found.calls == [("get_todo_task", {"task_id": 3})] and found.prose == "Sure."
    two = "\n".join(
        json.dumps({"name": "create_todo_task", "arguments": {"title": t}}) for t in ("a", "b")
    )
    assert [args for _, args in read_calls(two, TODO_TOOLS).calls] == [
        {"title": "a"},
        {"title": "b"},
    ]
    prose_only = [
        "[1] buy milk",
        "{not json}",
        "Call me at {noon}",
        "plain words",
        "[x] buy milk\n[ ] call mom",
        'Here it is:\n{"id": 1}',
        '{"id": 1, "title": "buy milk"}',  # JSON asked for, or a result copied: the answer
        '{"name": "Bob"',
    ]
    for prose in prose_only:
        assert (
            read_calls(prose, TODO_TOOLS).calls == [] and not read_calls(prose, TODO_TOOLS).unusable
        )


async def test_a_reply_copying_keels_notes_and_headers_is_cleaned(memory_keel):
    copied = (
        "## Current conversation (most important)\nUser: hi\nYou: Hello!\n\n"
        f"Hello again! {FALLBACK_NOTE}\nNot finished yet. Open items:\nI stopped after 6 rounds "
        "without finishing this.\nKEEL DONE: greeted"
    )
    with StubOpenAI() as stub:
        stub.reply(copied)
        result = await stubbed(memory_keel, str(uuid.uuid4()), "hi", stub)
    assert result.reply == "Hello again!" and result.complete


async def test_the_model_reads_its_earlier_replies_without_keels_notes(memory_keel):
    cid = str(uuid.uuid4())
    with StubOpenAI() as stub:
        stub.reply(tool_calls=[{"name": "create_todo_task", "args": {"title": "buy milk"}}])
        stub.server_error()
        stub.server_error()
        failed = await stubbed(memory_keel, cid, "add buy milk", stub)
        stub.reply("You have one task.\nKEEL DONE: told")
        await stubbed(memory_keel, cid, "how many tasks?", stub)
        shown = json.dumps(stub.requests[-1]["messages"])
    assert failed.reply.endswith(FALLBACK_NOTE)  # the person is told
    assert "Created task: buy milk" in shown and "model service failed" not in shown
    [context] = [m["content"] for m in stub.requests[-1]["messages"][1:] if m["role"] == "system"]
    assert context.startswith("Current conversation (most important), already handled")
    assert "- the user asked: add buy milk; create_todo_task returned {" in context
    assert "you answered: Created task: buy milk" in context and "User:" not in context
    assert without_notes(f"Created task: x\n{FALLBACK_NOTE}") == "Created task: x"


async def test_a_repeated_step_ends_the_turn_at_once_with_what_was_done(memory_keel):
    create = [{"name": "create_todo_task", "args": {"title": "buy milk"}}]
    with StubOpenAI() as stub:
        stub.always("unused")
        stub.answers.clear()
        for _ in range(6):  # a model that would go on for ever
            stub.reply(tool_calls=create)
        result = await stubbed(memory_keel, str(uuid.uuid4()), "add buy milk", stub)
        asked = len(stub.requests)
    assert asked == 2  # the call, and the same call again: no more rounds
    assert await titles(memory_keel) == ["buy milk"]
    assert not result.complete and not kinds(result, "loop_limit")
    assert result.reply == (
        "Created task: buy milk\n"
        "I stopped here: the model asked for a step it had already taken (create_todo_task)."
    )


async def test_reading_again_after_a_change_is_no_repeat(memory_keel):
    listing = [{"name": "list_todo_tasks", "args": {}}]
    with StubOpenAI() as stub:
        stub.reply(tool_calls=listing)
        stub.reply(tool_calls=[{"name": "create_todo_task", "args": {"title": "buy milk"}}])
        stub.reply(tool_calls=listing)
        stub.reply("Done: one task.\nKEEL DONE: listed")
        result = await stubbed(memory_keel, str(uuid.uuid4()), "add milk and show me", stub)
    assert [c["name"] for c in result.tool_calls] == [
        "list_todo_tasks",
        "create_todo_task",
        "list_todo_tasks",
    ]
    assert result.complete


async def half_done(memory_keel, *first_answers):
    """A turn planned as two adds whose model adds one and then fails (after ``first_answers``)."""
    with StubOpenAI() as stub:
        stub.plan(
            {
                "steps": [
                    {"description": "add 'call mom'", "tool": "create_todo_task"},
                    {"description": "add 'book the dentist'", "tool": "create_todo_task"},
                ]
            }
        )
        for answer in first_answers:
            stub.reply(answer)
        stub.reply(tool_calls=[{"name": "create_todo_task", "args": {"title": "call mom"}}])
        stub.server_error()
        stub.server_error()
        planner = build_title_model(api_key="test", model="stub", base_url=stub.base_url)
        return await stubbed(
            memory_keel,
            str(uuid.uuid4()),
            "add call mom and book the dentist",
            stub,
            plan_model=planner,
        )


async def test_a_request_half_done_before_a_fallback_is_not_reported_done(memory_keel):
    result = await half_done(memory_keel)
    assert await titles(memory_keel) == ["call mom"]
    assert not result.complete
    assert result.reply.endswith(
        "Left undone after the model service failed: add 'book the dentist'."
    )
    steps = {i["description"]: i["status"] for i in result.todolist["items"]}
    assert steps == {"add 'call mom'": "done", "add 'book the dentist'": "skipped"}


async def test_a_server_that_refuses_null_content_beside_calls_gets_an_empty_string(memory_keel):
    with StubOpenAI() as stub:
        stub.refuse_null_content = True
        stub.reply(tool_calls=[{"name": "create_todo_task", "args": {"title": "buy milk"}}])
        stub.reply("Added.\nKEEL DONE: added")
        result = await stubbed(memory_keel, str(uuid.uuid4()), "add buy milk", stub)
        [sent] = [m for m in stub.requests[1]["messages"] if m.get("tool_calls")]
    assert sent["content"] == "" and result.complete and not kinds(result, "model_fallback")


async def test_an_answer_that_only_says_done_shows_what_the_turn_did(memory_keel):
    with StubOpenAI() as stub:
        stub.reply(tool_calls=[{"name": "create_todo_task", "args": {"title": "buy milk"}}])
        stub.reply("KEEL DONE: added")
        added = await stubbed(memory_keel, str(uuid.uuid4()), "add buy milk", stub)
        stub.reply("Paris is the capital of France.")  # no DONE line: sent back once
        stub.reply("KEEL DONE:")
        told = await stubbed(memory_keel, str(uuid.uuid4()), "capital of France?", stub)
        [nudged] = [r for r in stub.requests if "Not finished yet" in json.dumps(r["messages"])]
    assert added.complete and added.reply == "Created task: buy milk"
    assert told.complete and told.reply == "Paris is the capital of France."
    assert not kinds(added, "model_fallback") and not kinds(told, "model_fallback")
    assert nudged["messages"][-2]["content"] == "Paris is the capital of France."


@pytest.mark.parametrize("rule", ["in_prompt", "after_results"])
async def test_the_done_line_is_asked_for_where_the_setting_says_and_may_share_a_line(
    memory_keel, rule
):
    prompt = system_prompt(TODO_TOOLS, rule)
    with StubOpenAI() as stub:
        stub.reply(tool_calls=[{"name": "create_todo_task", "args": {"title": "buy milk"}}])
        stub.reply("I added buy milk. KEEL DONE: added")
        result = await stubbed(memory_keel, str(uuid.uuid4()), "add buy milk", stub, prompt=prompt)
        first, second = (r["messages"] for r in stub.requests)
    assert result.complete and result.reply == "I added buy milk."
    assert ("KEEL DONE" in first[0]["content"]) == (rule == "in_prompt")
    asked_after = second[-1]["role"] == "system" and "KEEL DONE:" in second[-1]["content"]
    assert asked_after == (rule == "after_results")  # a capable model is asked once, up front


@pytest.mark.parametrize(
    "reply",
    [
        "I could not finish: task 5 does not exist.",
        "Not finished yet. I still need the due date.",
        "Here you go:\n[the docs](https://example.org)\n\nSecond paragraph.\n\nThird.",
        '```json\n{"name": "Bob", "tasks": 2}\n```',
        "Earlier context matters here: you asked twice.",
    ],
)
def test_a_models_own_lines_that_resemble_keels_are_kept(reply):
    filtered = DoneLines(tools=TODO_TOOLS)
    assert "".join([*filtered.feed(reply), *filtered.flush()]) == reply
    assert not filtered.calls and not filtered.unusable


def test_a_done_marker_inside_a_calls_arguments_is_the_title_not_the_end():
    filtered = DoneLines(tools=TODO_TOOLS)
    text = '{"name": "create_todo_task", "arguments": {"title": "x KEEL DONE: y"}}'
    assert "".join([*filtered.feed(text), *filtered.flush()]) == ""
    assert filtered.calls == [("create_todo_task", {"title": "x KEEL DONE: y"})]
    offline = DoneLines(echoes=False)  # keel's own model: a title that holds the marker is kept
    shown = "".join([*offline.feed("Created task: note KEEL DONE: fake"), *offline.flush()])
    assert shown == "Created task: note KEEL DONE: fake" and not offline.done


async def test_a_repeated_answer_ends_the_turn_instead_of_the_loop_limit(memory_keel):
    with StubOpenAI() as stub:
        stub.always("To continue, I need to know your next action.")
        result = await stubbed(memory_keel, str(uuid.uuid4()), "add buy milk", stub)
        asked = len(stub.requests)
    assert asked == 2 and not result.complete and not kinds(result, "loop_limit")
    assert result.reply == (
        "To continue, I need to know your next action.\n"
        "I stopped here: the model gave the same answer again."
    )


async def test_a_repeated_chat_answer_ends_without_a_note(memory_keel):
    with StubOpenAI() as stub:
        stub.always("The capital of France is Paris.")
        result = await stubbed(
            memory_keel, str(uuid.uuid4()), "what's the capital of France?", stub
        )
    assert result.reply == "The capital of France is Paris." and not result.complete


def test_copied_history_items_are_taken_out_of_a_reply():
    copied = "- the user asked: add milk; you answered: Created task: milk\nDone, Paris."
    assert without_notes(copied) == "Done, Paris."


async def test_a_server_that_cannot_stream_tool_calls_is_asked_for_whole_answers(memory_keel):
    streamed = []

    async def listening(event):  # a client streaming the turn, as the page does
        streamed.append(event)

    with StubOpenAI() as stub:
        stub.refuse_streamed_tools = True
        stub.reply(tool_calls=[{"name": "create_todo_task", "args": {"title": "buy milk"}}])
        stub.reply("Added buy milk.\nKEEL DONE: added")
        model = build_agent_model(
            TOOLS, "test", "stub", stub.base_url, ModelLimits(streaming=False)
        )
        context = memory_keel.context(model=model)
        result = await run_turn(
            memory_keel.graph, str(uuid.uuid4()), "add buy milk", context, sink=listening
        )
        asked_streaming = [r.get("stream") for r in stub.requests]
    assert result.complete and result.reply == "Added buy milk."
    assert not kinds(result, "model_fallback") and not any(asked_streaming)
    assert any(e.get("type") == "round_started" for e in streamed)  # it was streamed to a client


async def test_half_done_after_a_nudge_and_a_fallback_is_still_not_reported_done(memory_keel):
    result = await half_done(memory_keel, "Working on it.")  # stopped short: sent back once
    assert not result.complete
    assert result.reply.endswith(
        "Left undone after the model service failed: add 'book the dentist'."
    )
