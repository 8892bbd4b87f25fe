"""The offline model's decision: the next assistant message for a turn, from its messages alone.

``decide(messages, tools)`` reads the last human message as the request (a nudge only makes it look
again) and what the tool results after it say has been done. It understands the request
(``keel.tools.understanding.reading``); looks up first the tasks it names by what they are, and the
selections it makes ("all the completed ones"), all in one round (``keel.nodes.models.lookups``);
then calls the tools, every destructive call of the request in one round so the user is asked once;
then reports only what the tools returned, in the words each tool declares, with a short note for a
task it could not tell ("which one?") or could not find. A message with no request gets the answer
its kind of talk asks for (``keel.tools.understanding.talk``). Stateless: every round decides anew.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from contextlib import suppress
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolCall, ToolMessage
from langchain_core.tools import BaseTool

from keel.checkpoints.list_fields import list_name
from keel.checkpoints.times import FieldError
from keel.nodes.models.choices import WHICH, guessed, picked, referred, reminded
from keel.nodes.models.lookups import (
    chosen,
    find,
    found,
    is_lookup,
    last_listed,
    next_page_offset,
    select,
    selected,
)
from keel.nodes.models.takeover import describe
from keel.nodes.models.turn_messages import is_request, ran, request_text
from keel.tools.calls import payload, storable
from keel.tools.spec import spec_of, tool_named
from keel.tools.understanding.phrasings import Intent, Selection
from keel.tools.understanding.reading import understand
from keel.tools.understanding.talk import say
from keel.tools.yes_no import is_bare_answer

REPLY_KIND = "keel_reply"
UNREAD = frozenset({"offtopic", "unknown", "unsure", "missing"})
"""Kinds of message the offline model understood no request in (talk it knows is not one)."""
"""``response_metadata`` key of the kind of answer the offline model gave (help, which, ...)."""
SHOWN_MAX = 50
"""Results of one tool reported line by line; past this, the first ``SHOWN_FIRST`` and how many
more."""
SHOWN_FIRST = 10
_ASKED = re.compile(r"^call_(?P<asked>[a-z]+)_[0-9a-f]{12}$")


def help_text(tools: Sequence[BaseTool]) -> str:
    """What the model says it can do: each tool's example, in the tools' order."""
    examples = [e for t in tools if (e := spec_of(t).example)]
    if not examples:
        return "I have no tools to help with."
    listed = ", ".join(examples[:-1]) + " or " + examples[-1] if len(examples) > 1 else examples[0]
    return f"I can help with your todo list: {listed}."


def _call(intent: Intent, task_id: int | None, offset: int = 0) -> ToolCall:
    args = dict(intent.args)
    if isinstance(args.get("list"), str):  # the list by its name, as a model would call it
        with suppress(FieldError):
            args["list"] = list_name(args["list"])
    if task_id is not None:
        args["task_id"] = task_id
    if offset:
        args["offset"] = offset
    asked = f"{intent.asked}_" if intent.asked else ""
    call_id = f"call_{asked}{uuid.uuid4().hex[:12]}"
    return ToolCall(name=intent.tool, args=storable(args), id=call_id, type="tool_call")


def _answer(text: str, kind: str, summary: str) -> AIMessage:
    return AIMessage(f"{text}\nKEEL DONE: {summary}", response_metadata={REPLY_KIND: kind})


class _Round:
    """One round's reading of the request against what the turn has done so far."""

    def __init__(self, messages: Sequence[BaseMessage], start: int, tools: Sequence[BaseTool]):
        self.tools = tools
        self.earlier = messages[:start]
        self.executed = ran(messages[start + 1 :])
        self.found = found(self.executed)
        self.selected = selected(self.executed)
        self.to_find: list[str] = []
        self.to_select: list[Selection] = []
        self.notes: list[str] = []
        self.kinds: set[str] = set()
        told = {t.name for t in tools if spec_of(t).told_done}
        self.prefers_open = told

    def targets(self, intent: Intent, beside: bool = False) -> list[int | None]:
        """The task ids ``intent`` acts on (None: it names none); empty while a lookup is due.

        ``beside``: the message asked for something else too, so a deed it reports that matches
        no task ("remove the bread, I've got two loaves") is a remark, and says nothing.
        """
        if (selection := intent.select) is not None:
            if intent.tool in self.prefers_open and selection == "all":
                selection = "open"
            return self._selection(selection)
        if intent.ref is not None and intent.ref.isdigit() and intent.task_id is None:
            self.notes.append(f"There is no task {intent.ref[:12]}... (that number is too long).")
            self.kinds.add("not_found")
            return []
        if not intent.needs_lookup:
            return [intent.task_id]
        if (place := intent.place) is not None:
            return self._placed(place, intent.ref or "")
        ref = intent.ref or ""
        if intent.refers_back:
            return self._referred(ref)
        entry = self.found.get(ref)
        if entry is None:
            self.to_find.append(ref)
            return []
        if isinstance(entry, str):
            self.notes.append(entry)
            return []
        choice = chosen(entry, intent.tool in self.prefers_open)
        if choice.task is not None:
            return [choice.task["id"]]
        if choice.close:
            close = sorted(choice.close, key=lambda t: t["id"])
            listed = ", ".join(f"{t['id']}. {t['title']}" for t in close)
            self.notes.append(WHICH.format(ref=ref, listed=listed) + " Answer with its number.")
            self.kinds.add("which")
            return []
        closest = choice.closest
        if beside and intent.reported and closest is None:
            return []
        near = f" The closest is task {closest['id']}: {closest['title']}." if closest else ""
        self.notes.append(f'I couldn\'t find a task matching "{ref}".{near}')
        self.kinds.add("not_found")
        return []

    def _referred(self, pronoun: str) -> list[int | None]:
        """The tasks "it" or "them" stands for, or a question when that is not clear."""
        results = [payload(r) for c, r in self.executed if not is_lookup(c)]
        ids = referred(pronoun, results, self.earlier)
        if not ids:
            self.notes.append(f'Which task do you mean by "{pronoun}"? Say its number.')
            self.kinds.add("which")
        return list(ids)

    def _placed(self, place: tuple[str, int], ref: str) -> list[int | None]:
        """The tasks at a place in the list shown last ("the second one", "the last two"), or
        in the whole list in its order when none was shown.
        """  # noqa: D205
        shown = last_listed(self.earlier)
        if not shown:
            page = self.selected.get("all")
            if page is None or isinstance(page, str):
                return self._selection("all")
            shown = [t["id"] for t in page.get("tasks") or []]
        end, n = place
        picked = {"nth": shown[n - 1 : n], "first": shown[:n], "last": shown[-n:]}[end]
        if (end == "nth" and n > len(shown)) or not picked:
            self.notes.append(
                f"There is no {ref} task in the list: it has {len(shown)}."
                if shown
                else "Your list is empty."
            )
            self.kinds.add("not_found")
            return []
        return list(picked)

    def _selection(self, selection: Selection) -> list[int | None]:
        page = self.selected.get(selection)
        if page is None:
            if selection not in self.to_select:
                self.to_select.append(selection)
            return []
        if isinstance(page, str):
            self.notes.append(page)
            return []
        tasks = page.get("tasks") or []
        if not tasks:
            which = {"open": "open ", "done": "completed "}.get(selection, "")
            self.notes.append(f"You have no {which}tasks.")
            self.kinds.add("not_found")
        elif page.get("total", 0) > len(tasks):
            self.notes.append(
                f"That was the first {len(tasks)} of {page['total']:,}; ask again for the rest."
            )
        return [t["id"] for t in tasks]

    def report(self, count: int) -> AIMessage:
        """The final answer: what each call returned, then the notes."""
        by_tool: dict[str, list[str]] = {}
        cancelled: dict[str, list[Any]] = {}
        for call, result in self.executed:
            confirm = spec_of(tool_named(self.tools, call["name"])).confirm
            if confirm and result.additional_kwargs.get("cancelled"):
                cancelled.setdefault(call["name"], []).append(call["args"].get(confirm.target))
                continue
            if not is_lookup(call):
                by_tool.setdefault(call["name"], []).append(self._describe(call, result))
                if result.status == "error" and "not found" in str(result.content):
                    self.kinds.add("not_found")
        lines: list[str] = []
        for name, targets in cancelled.items():
            confirm = spec_of(tool_named(self.tools, name)).confirm
            lines.append(confirm.all_cancelled(targets) if confirm else "Cancelled.")
        for described in by_tool.values():
            shown = described if len(described) <= SHOWN_MAX else described[:SHOWN_FIRST]
            lines += shown
            if len(shown) < len(described):
                lines.append(f"... and {len(described) - len(shown)} more like these.")
        kind = "which" if "which" in self.kinds else "not_found" if self.kinds else "done"
        return _answer("\n".join(lines + self.notes), kind, f"answered {count} request(s)")

    def _describe(self, call: ToolCall, result: ToolMessage) -> str:
        asked = _ASKED.match(call.get("id") or "")
        return describe(call, result, self.tools, asked["asked"] if asked else None)


def decide(messages: Sequence[BaseMessage], tools: Sequence[BaseTool]) -> AIMessage:
    """The next assistant message for ``messages``: tool calls, or a final answer with DONE.

    Only ``tools`` are called, recognised by their phrasings and reported in their words.
    """
    humans = [i for i, m in enumerate(messages) if is_request(m)]
    if not humans:
        return _answer(help_text(tools), "help", "explained what I can do")
    start = humans[-1]
    request = request_text(messages[start])
    understood = understand(request, tools)
    earlier = messages[:start]
    intents = understood.intents or tuple(
        picked(request, earlier, tools)
        or guessed(request, earlier, tools)
        or reminded(request, earlier, tools)
    )
    if not intents:
        kind = understood.kind or "unknown"
        if kind in UNREAD and is_bare_answer(request):  # a yes or no, and no question waits
            kind = "answer"
        examples = {t.name: e for t in tools if (e := spec_of(t).example)}
        text = say(kind, understood.detail, examples, help_text(tools))
        return _answer(text, kind, "answered")
    round_ = _Round(messages, start, tools)
    seen = [(c["name"], c["args"]) for c, _ in round_.executed if not is_lookup(c)]
    calls: list[ToolCall] = []
    planned: list[tuple[str, Any]] = []
    asked = [i for i in intents if not i.reported]
    for intent in intents:
        for task_id in round_.targets(intent, beside=bool(asked)):
            offset = next_page_offset(round_.earlier) if intent.more else 0
            call = _call(intent, task_id, offset)
            key = (call["name"], call["args"])
            if key in planned:
                continue  # the same task named twice ("bread and butter": bread, butter)
            planned.append(key)
            if key in seen:
                seen.remove(key)
                continue
            calls.append(call)
    if round_.to_find or round_.to_select:  # look everything up first: then one round of calls,
        lookups = [find(round_.to_find)] if round_.to_find else []  # one question for them all
        return AIMessage("", tool_calls=lookups + [select(s) for s in round_.to_select])
    if calls:
        return AIMessage("", tool_calls=calls)
    return round_.report(len(intents))
