"""The rule-based chat model: keel's offline default and the fallback behind OpenAI.

A real LangChain ``BaseChatModel``: it binds tools, emits tool calls and ends its answers with the
DONE marker. It implements the todo decision table (see ``keel.tools.phrasings``) statelessly from
the messages it is given: the last human message is the request (a nudge only makes it look again);
tool results after it are what has been done. A task named by title is looked up with
``list_todo_tasks`` first, filtered by the title (a page of the matches at a time, so a lookup reads
each task once and returns at most a page, however long the list). A list is shown a page at a time;
"show more tasks" lists the page after the one the conversation showed last (found in the earlier
messages the model is given). It reports only what the tools returned, in the decision table's
phrases.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, NamedTuple

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, ToolCall, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from pydantic import ConfigDict

from keel.nodes.support.markers import (
    DEFAULT_DONE_MARKER,
    NUDGE_PREFIX,
    RESUME_KWARG,
    result_without_done,
    stream_without_done,
)
from keel.tools.calls import storable
from keel.tools.phrasings import Intent, parse_intents
from keel.tools.spec import spec_of
from keel.tools.todo import LIST, LIST_LIMIT_MAX

LOOKUP_PREFIX = "lookup_"
LOOKUP_PAGES = 3
"""Pages of title matches a lookup reads at most before it gives up on finding an exact title."""
_PAGE_SHOWN = re.compile(
    r"\(showing [\d,]+-(?P<shown>[\d,]+) of [\d,]+"
    rf'|{LIST}: \{{"total": (?P<total>\d+), "offset": \d+, "next_offset": (?P<next>\d+|null)'
)
"""Where a list shown earlier ended: a reply's page line, or a list result (paging comes first)."""
EARLIER_HEADER = "## Earlier context"
"""The history message's older section, after its current one (``keel.nodes.support.history``)."""


def help_text(tools: Sequence[BaseTool]) -> str:
    """What the model says it can do: each tool's example, in the tools' order."""
    examples = [e for t in tools if (e := spec_of(t).example)]
    if not examples:
        return "I have no tools to help with."
    listed = ", ".join(examples[:-1]) + " or " + examples[-1] if len(examples) > 1 else examples[0]
    return f"I can help with your todo list: {listed}."


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


def _lookup_pages(
    executed: Sequence[tuple[ToolCall, ToolMessage]],
) -> dict[str, list[ToolMessage]]:
    """The results of the turn's title lookups, by the title looked up, in the order they ran."""
    pages: dict[str, list[ToolMessage]] = {}
    for call, result in executed:
        title = call["args"].get("title_contains")
        if call["name"] == LIST and isinstance(title, str):
            pages.setdefault(title, []).append(result)
    return pages


class Lookup(NamedTuple):
    """What a title lookup has told so far."""

    task_id: int | None = None
    """The task the title names."""
    next_offset: int | None = None
    """Not known yet: the offset of the next page of matches to read."""
    note: str | None = None
    """No such task (or the lookup failed): what to tell the user."""


def _resolve(ref: str, results: Sequence[ToolMessage]) -> Lookup:
    """What the lookup pages of ``ref`` (oldest first) tell.

    An exact title wins (in any case); else the one task whose title contains ``ref``. While
    neither is certain and more matches are left, the next page is read, ``LOOKUP_PAGES`` at most.
    """
    wanted = ref.casefold()
    tasks: list[dict[str, Any]] = []
    for result in results:
        data = _payload(result)
        if not isinstance(data, dict):
            return Lookup(note=str(result.content))
        tasks.extend(data.get("tasks") or [])
    exact = [t for t in tasks if t["title"].casefold() == wanted]
    if exact:
        return Lookup(task_id=exact[0]["id"])
    last = _payload(results[-1])
    next_offset = last.get("next_offset") if isinstance(last, dict) else None
    if isinstance(next_offset, int) and len(results) < LOOKUP_PAGES:
        return Lookup(next_offset=next_offset)
    partial = [t for t in tasks if wanted in t["title"].casefold()]
    if len(partial) == 1 and next_offset is None:
        return Lookup(task_id=partial[0]["id"])
    return Lookup(note=f"I couldn't find a task called '{ref}'.")


def _lookup(ref: str, offset: int) -> ToolCall:
    args: dict[str, Any] = {"title_contains": ref, "limit": LIST_LIMIT_MAX}
    if offset:
        args["offset"] = offset
    lookup_id = f"{LOOKUP_PREFIX}{uuid.uuid4().hex[:12]}"
    return ToolCall(name=LIST, args=storable(args), id=lookup_id, type="tool_call")


def _in_order(message: BaseMessage) -> list[str]:
    """The texts of an earlier message, oldest first (a history message's older section first)."""
    if isinstance(message, ToolMessage):
        return [f"{message.name}: {message.text}"]
    text = message.text
    if message.type == "system" and (cut := text.find(EARLIER_HEADER)) >= 0:
        return [text[cut:], text[:cut]]
    return [text]


def next_page_offset(earlier: Sequence[BaseMessage]) -> int:
    """Where the page after the last list shown in ``earlier`` starts (0 when none was shown).

    The model is given earlier turns as a history text: the list reply's page line says where its
    page ended, and a list result (which puts its paging before its tasks) says it too when the
    reply was cut short. A title lookup's result starts otherwise, so it is never taken for a page.
    """
    found: re.Match[str] | None = None
    for message in earlier:
        for text in _in_order(message):
            for match in _PAGE_SHOWN.finditer(text):
                found = match
    if found is None:
        return 0
    if found["shown"] is not None:
        return int(found["shown"].replace(",", ""))
    return int(found["total"]) if found["next"] == "null" else int(found["next"])


def _call(intent: Intent, task_id: int | None, offset: int = 0) -> ToolCall:
    args = dict(intent.args)
    if task_id is not None:
        args["task_id"] = task_id
    if offset:
        args["offset"] = offset
    return ToolCall(
        name=intent.tool, args=storable(args), id=f"call_{uuid.uuid4().hex[:12]}", type="tool_call"
    )


def _describe(call: ToolCall, result: ToolMessage, tools: Sequence[BaseTool]) -> str:
    data = _payload(result)
    tool_ = next((t for t in tools if t.name == call["name"]), None)
    words = spec_of(tool_).report(data) if isinstance(data, dict) else None
    return words if words is not None else str(result.content)


def decide(messages: Sequence[BaseMessage], tools: Sequence[BaseTool]) -> AIMessage:
    """The next assistant message for ``messages``: tool calls, or a final answer with DONE.

    Only ``tools`` are called, recognised by their phrasings and reported in their words.
    """
    humans = [i for i, m in enumerate(messages) if m.type == "human" and not _is_nudge(m)]
    if not humans:
        return AIMessage(f"{help_text(tools)}\nDONE: explained what I can do")
    start = humans[-1]
    intents = parse_intents(_request(messages[start]), tools)
    if not intents:
        return AIMessage(f"{help_text(tools)}\nDONE: explained what I can do")
    executed = _executed(messages[start + 1 :])
    looked_up = _lookup_pages(executed)
    seen = [
        (c["name"], c["args"])
        for c, _ in executed
        if not (c.get("id") or "").startswith(LOOKUP_PREFIX)
    ]
    calls: list[ToolCall] = []
    notes: list[str] = []
    lookups: dict[str, int] = {}
    for intent in intents:
        task_id = intent.task_id
        if intent.needs_lookup:
            ref = intent.ref or ""
            if ref not in looked_up:
                lookups.setdefault(ref, 0)
                continue
            found = _resolve(ref, looked_up[ref])
            if found.next_offset is not None:
                lookups.setdefault(ref, found.next_offset)
                continue
            if found.task_id is None:
                notes.append(found.note or f"I couldn't find a task called '{ref}'.")
                continue
            task_id = found.task_id
        offset = next_page_offset(messages[:start]) if intent.more else 0
        call = _call(intent, task_id, offset)
        if (call["name"], call["args"]) in seen:
            seen.remove((call["name"], call["args"]))
            continue
        calls.append(call)
    calls += [_lookup(ref, offset) for ref, offset in lookups.items()]
    if calls:
        return AIMessage("", tool_calls=calls)
    lines = [
        _describe(c, r, tools)
        for c, r in executed
        if not (c.get("id") or "").startswith(LOOKUP_PREFIX)
    ]
    lines += notes
    return AIMessage("\n".join(lines) + f"\nDONE: answered {len(intents)} request(s)")


class RuleBasedChatModel(BaseChatModel):
    """An offline chat model that follows the todo decision table."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    tools: tuple[Any, ...] = ()
    """The bound tools: it only calls these, as their phrasings and replies say."""

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
        """Return a copy that may call ``tools`` (keel tools: others have no phrasings)."""
        return self.model_copy(update={"tools": tuple(t for t in tools if isinstance(t, BaseTool))})

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        *,
        message_id: str | None = None,
        done_marker: str = DEFAULT_DONE_MARKER,
        **kwargs: Any,
    ) -> ChatResult:
        """Decide; the answer comes back under ``message_id``, its DONE line taken out."""
        message = decide(messages, self.tools)
        result = ChatResult(generations=[ChatGeneration(message=message)])
        return result_without_done(result, message_id, done_marker)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        """Decide on the event loop: the decision table takes microseconds, a thread hop more."""
        return self._generate(messages, stop, **kwargs)

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        *,
        message_id: str | None = None,
        done_marker: str = DEFAULT_DONE_MARKER,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        """The answer line by line, for a caller that streams, its DONE line taken out."""

        async def whole() -> AsyncIterator[BaseMessage]:
            yield decide(messages, self.tools)

        async for chunk in stream_without_done(whole(), message_id, done_marker):
            yield chunk
