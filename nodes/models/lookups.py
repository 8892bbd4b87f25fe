"""What the offline model reads from a turn's tool results: the tasks named, a list's page.

A task named by what it is ("the milk one") is looked up with ``find_todo_tasks``, one call for
every description of the message, so the user's titles are read once a turn (``find``, then
``chosen`` reads the matches: one clear task, several close ones to ask about, or none). A
selection ("all the completed ones") is read with ``list_todo_tasks`` filtered by status, one page
of ``LIST_LIMIT_MAX`` (``select``, ``selected``). "show more tasks" lists the page after the one
the conversation showed last (``next_page_offset``, read from the earlier messages the model is
given). Used by ``keel.nodes.models.rule_based``.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage, ToolCall, ToolMessage

from keel.tools.calls import payload, storable
from keel.tools.tasks.matching import Choice, choose
from keel.tools.tasks.pages import LIST_LIMIT_MAX
from keel.tools.tasks.todo import FIND, LIST
from keel.tools.understanding.phrasings import Selection

LOOKUP_PREFIX = "lookup_"
_PAGE_SHOWN = re.compile(
    r"\(showing [\d,]+-(?P<shown>[\d,]+) of [\d,]+"
    rf'|{LIST}: \{{"total": (?P<total>\d+), "offset": \d+, "next_offset": (?P<next>\d+|null)'
)
"""Where a list shown earlier ended: a reply's page line, or a list result (paging comes first)."""
EARLIER_HEADER = "## Earlier context"
"""The history message's older section, after its current one (``keel.nodes.context.recency``)."""
STATUS: dict[Selection, str | None] = {"all": None, "open": "open", "done": "done"}
"""The list filter that reads each selection."""

Executed = Sequence[tuple[ToolCall, ToolMessage]]


def is_lookup(call: ToolCall) -> bool:
    """The call only looked tasks up for the model: it is no request of the user's."""
    return (call.get("id") or "").startswith(LOOKUP_PREFIX)


def _lookup(name: str, args: dict[str, Any]) -> ToolCall:
    lookup_id = f"{LOOKUP_PREFIX}{uuid.uuid4().hex[:12]}"
    return ToolCall(name=name, args=storable(args), id=lookup_id, type="tool_call")


def find(descriptions: Sequence[str]) -> ToolCall:
    """The call that finds the tasks ``descriptions`` name, all of them at once."""
    return _lookup(FIND, {"descriptions": list(descriptions)})


def select(selection: Selection) -> ToolCall:
    """The call that reads the first page of the tasks ``selection`` takes."""
    status = STATUS[selection]
    return _lookup(LIST, {"limit": LIST_LIMIT_MAX, **({"status": status} if status else {})})


def found(executed: Executed) -> dict[str, dict[str, Any] | str]:
    """The turn's finds: each description's matches and closest title, or the error it met."""
    matches: dict[str, dict[str, Any] | str] = {}
    for call, result in executed:
        if call["name"] != FIND or not is_lookup(call):
            continue
        data = payload(result)
        if not isinstance(data, dict):
            for description in call["args"].get("descriptions") or []:
                matches[description] = str(result.content)
            continue
        asked = call["args"].get("descriptions") or []
        for description, entry in zip(asked, data.get("found") or [], strict=False):
            matches[description] = entry  # by place: the tool may have cut a long description
    return matches


def selected(executed: Executed) -> dict[Selection, dict[str, Any] | str]:
    """The turn's selections read: each one's page, or the error it met."""
    pages: dict[Selection, dict[str, Any] | str] = {}
    for call, result in executed:
        if call["name"] != LIST or not is_lookup(call):
            continue
        status = call["args"].get("status")
        selection: Selection = "all" if status is None else status
        data = payload(result)
        pages[selection] = data if isinstance(data, dict) else str(result.content)
    return pages


def chosen(entry: dict[str, Any], prefer_open: bool) -> Choice:
    """What a description's matches tell (``tasks.matching.choose``), its closest kept."""
    choice = choose(entry.get("tasks") or [], prefer_open)
    if choice.task is None and not choice.close:
        return Choice(closest=entry.get("closest"))
    return choice


def _in_order(message: BaseMessage) -> list[str]:
    """The texts of an earlier message, oldest first (a history message's older section first)."""
    if isinstance(message, ToolMessage):
        return [f"{message.name}: {message.text}"]
    text = message.text
    if message.type == "system" and (cut := text.find(EARLIER_HEADER)) >= 0:
        return [text[cut:], text[:cut]]
    return [text]


_TASK_LINE = re.compile(r"^- \[[ xX]\] (\d{1,19})\. ", re.M)
"""A task line as a listing shows it ("- [ ] 4. renew passport")."""


def last_listed(earlier: Sequence[BaseMessage]) -> list[int]:
    """The task ids the last listing among ``earlier`` showed, in the order shown ([] for none):
    what "the second one" or "the last one" counts in.
    """  # noqa: D205
    ids: list[int] = []
    for message in earlier:
        for text in _in_order(message):
            for block in re.split(r"\n(?=User: )", text):
                if found := _TASK_LINE.findall(block):
                    ids = [int(n) for n in found]
    return ids


def next_page_offset(earlier: Sequence[BaseMessage]) -> int:
    """Where the page after the last list shown in ``earlier`` starts (0 when none was shown).

    The model is given earlier turns as a history text: the list reply's page line says where its
    page ended, and a list result (which puts its paging before its tasks) says it too when the
    reply was cut short.
    """
    last: re.Match[str] | None = None
    for message in earlier:
        for text in _in_order(message):
            for match in _PAGE_SHOWN.finditer(text):
                last = match
    if last is None:
        return 0
    if last["shown"] is not None:
        return int(last["shown"].replace(",", ""))
    return int(last["total"]) if last["next"] == "null" else int(last["next"])
