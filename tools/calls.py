"""Running one tool call: the one way a model's (or an MCP client's) tool call reaches a tool.

``run_tool_call`` turns a tool call into a ``ToolMessage``: JSON of what the store returned, or
``Error: ...`` with the store's own message. Nothing is reported that the store did not return,
and no mutating call runs twice (see ``keel.tools.ledger``). ``storable`` keeps tool-call
arguments fit for a checkpoint. ``tool_error``, ``payload`` and ``unanswered`` are how the nodes
answer a call with an error, read a result, and find the calls still waiting for one.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import suppress
from typing import Any

import structlog
from langchain_core.messages import BaseMessage, ToolCall, ToolMessage
from langchain_core.tools import BaseTool
from pydantic import BaseModel, ValidationError

from keel.checkpoints.database import is_duplicate
from keel.checkpoints.trouble import trouble_of
from keel.tools.crash_points import pause_point
from keel.tools.ledger import recall, record
from keel.tools.spec import spec_of, tool_named
from keel.tools.tasks.store import TaskError, TaskStore

log = structlog.get_logger(__name__)


def storable(value: Any) -> Any:
    """Tool-call arguments with every integer past 64 bits written as its digits.

    A tool call may name any number ("Show task 99999999999999999999"), but the checkpoint
    serialiser refuses such an integer, which would fail every later turn of the conversation.
    The tool still reads the digits, and answers that there is no such task.
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value if -(2**63) <= value < 2**64 else str(value)
    if isinstance(value, dict):
        return {k: storable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [storable(v) for v in value]
    return value


def tool_error(call: ToolCall, text: str) -> ToolMessage:
    """The error result ``text`` answering ``call``."""
    return ToolMessage(text, tool_call_id=call.get("id") or "", name=call["name"], status="error")


def payload(result: ToolMessage, *, text: bool = False) -> Any:
    """What a tool returned, as JSON; None for an error or a text result.

    With ``text``, an error or a text result gives its text instead.
    """
    content = str(result.content)
    if result.status != "error":
        with suppress(ValueError):
            return json.loads(content)
    return content if text else None


def unanswered(calls: Sequence[ToolCall], messages: Sequence[BaseMessage]) -> list[ToolCall]:
    """The ``calls`` that have no result among ``messages``."""
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    return [c for c in calls if c.get("id") not in answered]


def _validation_message(name: str, exc: ValidationError) -> str:
    problems = "; ".join(
        f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}"
        for e in exc.errors()
        if e["loc"] and e["loc"][0] not in ("user_id", "store")
    )
    return f"Error: invalid arguments for {name}: {problems or 'missing arguments'}."


async def _call_tool(tool_: BaseTool, args: dict[str, Any]) -> Any:
    """The tool's function on ``args`` checked against its schema (``ValidationError`` if not).

    What ``tool.ainvoke`` does, without the callback run it opens and the signature it inspects
    on every call: keel's tool calls are traced as graph steps already.
    """
    schema = tool_.args_schema
    coroutine = getattr(tool_, "coroutine", None)
    if coroutine is None or not isinstance(schema, type) or not issubclass(schema, BaseModel):
        return await tool_.ainvoke(args)
    parsed = schema.model_validate(args)
    return await coroutine(**{k: getattr(parsed, k) for k in args if k in schema.model_fields})


async def _invoke(tool_: BaseTool, call: ToolCall, user_id: str, store: TaskStore) -> ToolMessage:
    args = {k: v for k, v in (call.get("args") or {}).items() if k not in ("user_id", "store")}
    try:
        result = await _call_tool(tool_, {**args, "user_id": user_id, "store": store})
    except TaskError as exc:
        return tool_error(call, f"Error: {exc.message}")
    except ValidationError as exc:
        return tool_error(call, _validation_message(call["name"], exc))
    content = json.dumps(result, default=str)
    return ToolMessage(content, tool_call_id=call.get("id") or "", name=call["name"])


async def run_tool_call(
    call: ToolCall,
    user_id: str,
    store: TaskStore,
    *,
    tools: Sequence[BaseTool],
    pause_at: str | None = None,
    key: str | None = None,
    first_run: bool = False,
) -> ToolMessage:
    """Run one tool call for ``user_id`` and return its ToolMessage (status error on failure).

    A mutating call with a ``key`` (else its id) runs at most once: its result is recorded under
    the key in the transaction that changes the task, and a call with a recorded key returns that
    result again. ``first_run``: the call cannot have run before (the first run of a turn keel's
    runner runs), so the ledger is not asked first; a record that is there after all still fails
    the transaction and answers what it holds. ``tools`` are the tools it may run (the run's);
    ``pause_at`` is for crash tests (``keel.tools.crash_points``). A tool that fails in a way of
    its own (not the database) answers an error, its transaction rolled back, and is not
    recorded: a retry runs it again.
    """
    name, call_id = call["name"], call.get("id") or ""
    tool_ = tool_named(tools, name)
    if tool_ is None:
        return tool_error(call, f"Error: unknown tool {name!r}.")
    try:
        try:
            return await _run(tool_, call, user_id, store, pause_at, key or call_id, first_run)
        except Exception as exc:
            if not (first_run and is_duplicate(exc)):
                raise
            # recorded after all: nothing of this run was kept, and the record is the answer
            return await _run(tool_, call, user_id, store, pause_at, key or call_id, False)
    except Exception as exc:
        if trouble_of(exc):  # the database cannot serve now: the caller retries or answers 503
            raise
        log.exception("tool_failed", tool=name, error=type(exc).__name__)
        text = f"Error: {name} failed ({type(exc).__name__}); nothing it would change was kept."
        return tool_error(call, text)


async def _run(
    tool_: BaseTool,
    call: ToolCall,
    user_id: str,
    store: TaskStore,
    pause_at: str | None,
    key: str,
    first_run: bool,
) -> ToolMessage:
    name, call_id = call["name"], call.get("id") or ""
    if not spec_of(tool_).mutates or not key:
        return await _invoke(tool_, call, user_id, store)
    async with store.db.transaction() as tx:
        if not first_run and (recorded := await recall(tx, user_id, key)):
            return ToolMessage(
                recorded.content, tool_call_id=call_id, name=name, status=recorded.status
            )
        message = await _invoke(tool_, call, user_id, store.within(tx))
        content = str(message.content)
        await record(store.db, tx, user_id, key, name, message.status, content, store.clock)
    pause_point("after_tool_commit", pause_at)
    return message
