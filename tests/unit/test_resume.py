"""Resume in a fresh window after context exhaustion."""

import uuid

import pytest
import structlog
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from keel.graphs.run_turn import run_turn
from keel.graphs.runner import snapshot, thread_config
from keel.nodes.assistant import INTERRUPTED_CALL, model_input, repair_window
from keel.nodes.models.chat import build_agent_model, system_prompt
from keel.nodes.models.takeover import FALLBACK_NOTE
from keel.nodes.models.tokens import count_tokens
from keel.nodes.resume import continuation_step
from keel.tools.next_step import note_from_args, parse_next_step, record_next_step
from keel.tools.tasks.todo import TODO_TOOLS
from tests.stub_openai import StubOpenAI
from tests.unit.scripted import ScriptedModel, call

AGENT_TOOLS = [*TODO_TOOLS, record_next_step]
PROMPT = system_prompt(TODO_TOOLS)


@pytest.mark.parametrize(
    "note,expected",
    [
        (
            "# Step 5: Implement user authentication\nContinue with the OAuth2 integration...",
            {"step": 5, "description": "Implement user authentication"},
        ),
        (
            "## Step 5\nImplement user authentication",
            {"step": 5, "description": "Implement user authentication"},
        ),
        ("5. Implement authentication", {"step": 5, "description": "Implement authentication"}),
        ("step 12 - tidy up", {"step": 12, "description": "tidy up"}),
        ("no step here", None),
        ("", None),
    ],
)
def test_next_step_notes_in_the_seed_formats(note, expected):
    assert parse_next_step(note) == expected


def test_note_arguments():
    assert note_from_args({"step": 3, "description": "add eggs"}) == {
        "step": 3,
        "description": "add eggs",
    }
    assert note_from_args({"description": "## Step 4\nadd milk"}) == {
        "step": 4,
        "description": "add milk",
    }
    assert note_from_args({"description": "whenever"}) is None


def plan(steps_completed, statuses):
    items = [
        {"id": i + 1, "description": f"step {i + 1}", "tool": None, "status": s}
        for i, s in enumerate(statuses)
    ]
    return {"id": "t", "items": items, "steps_completed": steps_completed}


def test_continuation_prefers_the_note_then_steps_completed_then_step_one():
    note = {"step": 7, "description": "from the note"}
    assert continuation_step({"next_step": note, "todolist": plan([1], ["done", "pending"])}) == (
        7,
        "from the note",
    )
    assert continuation_step({"todolist": plan([1, 2], ["done", "done", "pending"])}) == (
        3,
        "step 3",
    )
    assert continuation_step({"todolist": plan([], ["pending"])}) == (1, "step 1")
    assert continuation_step({}) == (1, "Continue workflow")


def test_window_repair_gives_every_tool_call_a_result():
    calls = [
        {"name": "create_todo_task", "args": {"title": "a"}, "id": "c1"},
        {"name": "create_todo_task", "args": {"title": "b"}, "id": "c2"},
    ]
    window = [
        HumanMessage("add a and b"),
        AIMessage("", tool_calls=calls),
        ToolMessage("{}", tool_call_id="c1"),
        HumanMessage("and then?"),
    ]
    repaired = repair_window(window)
    assert [m.type for m in repaired] == ["human", "ai", "tool", "tool", "human"]
    assert repaired[3].tool_call_id == "c2" and repaired[3].content == INTERRUPTED_CALL
    assert repair_window(repaired) == repaired


async def test_exhausting_a_small_budget_twice_still_completes_the_plan(keel):
    """Four single steps; the budget lets about two fit in a window."""
    cid = str(uuid.uuid4())
    replies = [AIMessage("", tool_calls=[call("create_todo_task", title=t)]) for t in "abcd"]
    replies.append(AIMessage("All four added.\nKEEL DONE: added a, b, c, d"))
    model = ScriptedModel(replies=replies, seen=[])
    base = count_tokens(
        model_input({"window": [HumanMessage("add a; add b; add c; add d")]}, PROMPT)
    )
    context = keel.context(model=model, context_token_budget=base + 90, loop_limit=12)
    with structlog.testing.capture_logs() as logs:
        result = await run_turn(keel.graph, cid, "add a; add b; add c; add d", context)
    state = await snapshot(keel.graph, cid)
    assert result.complete
    assert state["stats"]["total_resumes"] >= 2
    assert [i["status"] for i in result.todolist["items"]] == ["done"] * 4
    assert sorted(t["title"] for t in await keel.store.list("local")) == ["a", "b", "c", "d"]
    resumed = [e for e in result.events if e["type"] == "resumed"]
    assert len(resumed) == state["stats"]["total_resumes"]
    assert any(e["event"].startswith("Starting new session from step") for e in logs)
    values = (await keel.graph.aget_state(thread_config(cid))).values
    audit = [a for a in values["audit"] if a["kind"] == "resume"]
    assert len(audit) == len(resumed)
    assert audit[0]["detail"]["to_step"] == audit[0]["detail"]["from_step"] + 1
    assert audit[0]["detail"]["backup_id"] is None  # no backup store in this context
    users = [m for m in await keel.messages.page(cid) if m.role == "user"]
    assert [m.content for m in users] == ["add a; add b; add c; add d"]  # the log is untouched


async def test_resume_backs_up_and_keeps_ten(keel):
    from keel.checkpoints.backend import open_backend
    from keel.checkpoints.backups import BackupStore

    cid = str(uuid.uuid4())
    async with open_backend(keel.url) as other:
        saver = keel.graph.checkpointer if keel.url == "memory" else other.saver
        backups = BackupStore(saver, keel.db, keep=10)
        model = ScriptedModel(replies=[], seen=[])
        for n in range(12):
            model.replies.append(AIMessage(f"ok {n}\nKEEL DONE: ok"))
            context = keel.context(
                model=model, context_token_budget=1, backups=backups, loop_limit=1
            )
            await run_turn(keel.graph, cid, f"hello {n}", context)
        kept = await backups.list(cid)
        assert len(kept) == 10
        restored = await saver.aget_tuple(
            {"configurable": {"thread_id": kept[0], "checkpoint_ns": ""}}
        )
        assert restored is not None and restored.checkpoint["channel_values"]["request"].startswith(
            "hello"
        )


async def test_a_failed_backup_warns_and_the_resume_goes_on(memory_keel):
    class Broken:
        async def backup(self, *args):
            raise RuntimeError("disk full")

    model = ScriptedModel(replies=[AIMessage("fine\nKEEL DONE: ok")], seen=[])
    context = memory_keel.context(model=model, context_token_budget=1, backups=Broken())
    with structlog.testing.capture_logs() as logs:
        result = await run_turn(memory_keel.graph, str(uuid.uuid4()), "hello", context)
    assert result.complete and result.reply == "fine"
    assert "backup_failed" in [e["event"] for e in logs]
    assert [e["type"] for e in result.events].count("resumed") == 1


async def test_the_template_and_the_recorded_note_shape_the_prompt(memory_keel):
    replies = [
        AIMessage("", tool_calls=[call("record_next_step", step=2, description="add eggs")]),
        AIMessage("", tool_calls=[call("create_todo_task", title="milk")]),
        AIMessage("", tool_calls=[call("create_todo_task", title="eggs")]),
        AIMessage("done\nKEEL DONE: ok"),
    ]
    model = ScriptedModel(replies=replies, seen=[])
    base = count_tokens(model_input({"window": [HumanMessage("add milk; add eggs")]}, PROMPT))
    context = memory_keel.context(
        model=model,
        context_token_budget=base + 30,
        loop_limit=10,
        resume_template="Resume at {step}: {description}",
    )
    result = await run_turn(memory_keel.graph, str(uuid.uuid4()), "add milk; add eggs", context)
    firsts = [
        m
        for seen in model.seen
        for m in seen
        if m.type == "human" and m.content.startswith("Resume at ")
    ]
    assert firsts, "a resume happened"
    assert firsts[0].content.startswith("Resume at 2: add eggs")
    assert "Summary of the previous context:" in firsts[0].content
    assert result.complete


async def test_the_rule_based_model_continues_the_open_steps_after_a_resume(memory_keel):
    context = memory_keel.context(context_token_budget=40, loop_limit=10)
    result = await run_turn(memory_keel.graph, str(uuid.uuid4()), "add milk; add eggs", context)
    assert result.complete
    titles = [t["title"] for t in await memory_keel.store.list("local")]
    assert sorted(titles) == ["eggs", "milk"]


async def test_a_provider_context_length_error_resumes_in_a_fresh_window(memory_keel):
    with StubOpenAI() as stub:
        stub.context_length_error()
        stub.reply(tool_calls=[{"name": "create_todo_task", "args": {"title": "milk"}}])
        stub.reply("Created task: milk\nKEEL DONE: added milk")
        model = build_agent_model(AGENT_TOOLS, api_key="test", model="stub", base_url=stub.base_url)
        result = await run_turn(
            memory_keel.graph, str(uuid.uuid4()), "add milk", memory_keel.context(model=model)
        )
        assert [e["type"] for e in result.events].count("resumed") == 1
        assert result.events[0]["data"]["reason"] == "context_length_error"
        assert result.reply == "Created task: milk" and result.complete
        assert len(stub.requests) == 3
        retried = stub.requests[1]["messages"]
        assert any("Continue from step 1" in str(m.get("content")) for m in retried)
        assert [t["title"] for t in await memory_keel.store.list("local")] == ["milk"]


async def test_other_provider_failures_fall_back_to_the_rule_based_model(memory_keel):
    with StubOpenAI() as stub:
        stub.server_error()
        stub.server_error()
        stub.server_error()
        model = build_agent_model(AGENT_TOOLS, api_key="test", model="stub", base_url=stub.base_url)
        result = await run_turn(
            memory_keel.graph, str(uuid.uuid4()), "Add buy milk", memory_keel.context(model=model)
        )
        assert result.reply == f"Created task: buy milk\n{FALLBACK_NOTE}" and result.complete
        assert len(stub.requests) == 2, "OpenAI was tried first, and retried once; then no more"
        [fallback] = [e["data"] for e in result.events if e["type"] == "model_fallback"]
        assert fallback == {
            "reason": "http_500",
            "status": 500,
            "detail": "upstream down",
            "step": "answer",
        }
