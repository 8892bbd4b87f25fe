"""What the offline model reads from a turn's tool results: a task a title names, a list's page.

A task named by title is looked up with ``list_todo_tasks`` filtered by the title, a page of the
matches at a time (``lookup``, ``resolve``); "show more tasks" lists the page after the one the
conversation showed last (``next_page_offset``, read from the earlier messages the model is given).
Used by ``keel.nodes.support.rule_model``.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Sequence
from typing import Any, NamedTuple

from langchain_core.messages import BaseMessage, ToolCall, ToolMessage

from keel.tools.calls import storable
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


def payload(result: ToolMessage) -> Any:
    """What a tool returned, as JSON; None for an error or a text result."""
    if result.status == "error":
        return None
    try:
        return json.loads(str(result.content))
    except ValueError:
        return None


def lookup_pages(
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


def resolve(ref: str, results: Sequence[ToolMessage]) -> Lookup:
    """What the lookup pages of ``ref`` (oldest first) tell.

    An exact title wins (in any case); else the one task whose title contains ``ref``. While
    neither is certain and more matches are left, the next page is read, ``LOOKUP_PAGES`` at most.
    """
    wanted = ref.casefold()
    tasks: list[dict[str, Any]] = []
    for result in results:
        data = payload(result)
        if not isinstance(data, dict):
            return Lookup(note=str(result.content))
        tasks.extend(data.get("tasks") or [])
    exact = [t for t in tasks if t["title"].casefold() == wanted]
    if exact:
        return Lookup(task_id=exact[0]["id"])
    last = payload(results[-1])
    next_offset = last.get("next_offset") if isinstance(last, dict) else None
    if isinstance(next_offset, int) and len(results) < LOOKUP_PAGES:
        return Lookup(next_offset=next_offset)
    partial = [t for t in tasks if wanted in t["title"].casefold()]
    if len(partial) == 1 and next_offset is None:
        return Lookup(task_id=partial[0]["id"])
    return Lookup(note=f"I couldn't find a task called '{ref}'.")


def lookup(ref: str, offset: int) -> ToolCall:
    """The list call that reads the page at ``offset`` of the tasks whose titles hold ``ref``."""
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
