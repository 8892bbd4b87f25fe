"""The rule-based chat model: keel's offline default and the fallback behind OpenAI.

A real LangChain ``BaseChatModel``: it binds tools, emits tool calls and ends its answers with the
DONE marker. It implements the todo decision table (see ``keel.nodes.intents``) statelessly from the
messages it is given: the last human message is the request (a nudge only makes it look again);
tool results after it are what has been done. A task named by title is looked up with
``list_todo_tasks`` first. It reports only what the tools returned, in the decision table's phrases.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, ToolCall, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from keel.nodes.intents import Intent, parse_intents
from keel.nodes.markers import NUDGE_PREFIX, RESUME_KWARG
from keel.tools.todo import COMPLETE, CREATE, DELETE, GET, LIST, RENAME, storable

LOOKUP_PREFIX = "lookup_"
HELP_TEXT = (
    'I can help with your todo list: add a task ("Add buy milk"), show one ("Show task 2"), '
    'list them ("What\'s on my list?"), rename one ("Rename task 2 to call mom"), complete one '
    '("Complete 2") or delete one ("Delete task 2").'
)


def _request(message: BaseMessage) -> str:
    """The request a human message makes; a resume's continuation asks for the open steps."""
    remaining = message.additional_kwargs.get(RESUME_KWARG)
    if isinstance(remaining, list):
        return "; ".join(str(r) for r in remaining)
    return message.text


def _is_nudge(message: BaseMessage) -> bool:
    return message.type == "human" and message.text.startswith(NUDGE_PREFIX)


def _executed(after: Sequence[BaseMessage]) -> list[tuple[ToolCall, ToolMessage]]:
    results = {m.tool_call_id: m for m in after if isinstance(m, ToolMessage)}
    done = []
    for m in after:
        if isinstance(m, AIMessage):
            for call in m.tool_calls:
                if (call_id := call.get("id")) in results:
                    done.append((call, results[call_id or ""]))
    return done


def _payload(result: ToolMessage) -> Any:
    if result.status == "error":
        return None
    try:
        return json.loads(str(result.content))
    except ValueError:
        return None


def _resolve(ref: str, tasks: list[dict[str, Any]]) -> int | None:
    wanted = ref.casefold()
    exact = [t for t in tasks if t["title"].casefold() == wanted]
    partial = [t for t in tasks if wanted in t["title"].casefold()]
    found = exact or (partial if len(partial) == 1 else [])
    return found[0]["id"] if found else None


def _call(intent: Intent, task_id: int | None) -> ToolCall:
    args = dict(intent.args)
    if task_id is not None:
        args["task_id"] = task_id
    return ToolCall(
        name=intent.tool, args=storable(args), id=f"call_{uuid.uuid4().hex[:12]}", type="tool_call"
    )


def _describe(call: ToolCall, result: ToolMessage) -> str:
    data = _payload(result)
    if not isinstance(data, dict):
        return str(result.content)
    name = call["name"]
    if name == LIST:
        tasks = data.get("tasks", [])
        if not tasks:
            return "Your list is empty."
        lines = [f"  {t['id']}. [{'x' if t['completed'] else ' '}] {t['title']}" for t in tasks]
        return "Your tasks:\n" + "\n".join(lines)
    if name == GET:
        state = "completed" if data["completed"] else "open"
        return f"Task {data['id']}: {data['title']} ({state})"
    phrases: dict[str, Callable[[dict[str, Any]], str]] = {
        CREATE: lambda d: f"Created task: {d['title']}",
        RENAME: lambda d: f"Renamed task {d['id']} to: {d['title']}",
        COMPLETE: lambda d: f"Completed task: {d['title']}",
        DELETE: lambda d: f"Deleted task {d['id']}: {d['title']}",
    }
    return phrases[name](data) if name in phrases else str(result.content)


def decide(messages: Sequence[BaseMessage], tool_names: Sequence[str]) -> AIMessage:
    """The next assistant message for ``messages``: tool calls, or a final answer with DONE."""
    humans = [i for i, m in enumerate(messages) if m.type == "human" and not _is_nudge(m)]
    if not humans:
        return AIMessage(f"{HELP_TEXT}\nDONE: explained what I can do")
    start = humans[-1]
    intents = [i for i in parse_intents(_request(messages[start])) if i.tool in tool_names]
    if not intents:
        return AIMessage(f"{HELP_TEXT}\nDONE: explained what I can do")
    executed = _executed(messages[start + 1 :])
    lookups = [_payload(r) for c, r in executed if c["name"] == LIST]
    tasks = next((p["tasks"] for p in reversed(lookups) if isinstance(p, dict)), None)
    seen = [
        (c["name"], c["args"])
        for c, _ in executed
        if not (c.get("id") or "").startswith(LOOKUP_PREFIX)
    ]
    calls: list[ToolCall] = []
    notes: list[str] = []
    need_lookup = False
    for intent in intents:
        task_id = intent.task_id
        if intent.needs_lookup:
            if tasks is None:
                need_lookup = True
                continue
            task_id = _resolve(intent.ref or "", tasks)
            if task_id is None:
                notes.append(f"I couldn't find a task called '{intent.ref}'.")
                continue
        call = _call(intent, task_id)
        if (call["name"], call["args"]) in seen:
            seen.remove((call["name"], call["args"]))
            continue
        calls.append(call)
    if need_lookup:
        lookup_id = f"{LOOKUP_PREFIX}{uuid.uuid4().hex[:12]}"
        calls.append(ToolCall(name=LIST, args={}, id=lookup_id, type="tool_call"))
    if calls:
        return AIMessage("", tool_calls=calls)
    lines = [
        _describe(c, r) for c, r in executed if not (c.get("id") or "").startswith(LOOKUP_PREFIX)
    ]
    lines += notes
    return AIMessage("\n".join(lines) + f"\nDONE: answered {len(intents)} request(s)")


class RuleBasedChatModel(BaseChatModel):
    """An offline chat model that follows the todo decision table."""

    tool_names: tuple[str, ...] = ()
    """Names of the bound tools; it only calls these."""

    @property
    def _llm_type(self) -> str:
        return "keel-rule-based"

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Return a copy that may call ``tools``."""
        names = tuple(convert_to_openai_tool(t)["function"]["name"] for t in tools)
        return self.model_copy(update={"tool_names": names})

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        message = decide(messages, self.tool_names)
        return ChatResult(generations=[ChatGeneration(message=message)])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        """Decide on the event loop: the decision table takes microseconds, a thread hop more."""
        return self._generate(messages, stop, **kwargs)
