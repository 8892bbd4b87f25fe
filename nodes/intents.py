"""The decision table of the todo assistant as a parser from words to intended tool calls.

``parse_intents(text)`` splits a message into requests ("add milk and delete task 2") and maps each
to an ``Intent``: the tool, its arguments, and a task reference that may be an id or a title.
Used by the rule-based chat model (to choose tool calls) and by the plan node (one todolist item
per intent). Confirmation phrases inside a request ("delete task 3, yes I'm sure") are recognised
by ``confirms`` and never parsed as requests of their own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

_ID = r"(?:task\s*)?#?(?P<ref>.+?)"
_TABLE: list[tuple[str, re.Pattern[str]]] = [
    (
        "list_todo_tasks",
        re.compile(
            r"^(?:what'?s|what is) (?:on )?(?:my|the) (?:todo )?list\??$"
            r"|^show (?:me )?(?:all|everything)(?: (?:my )?tasks)?$"
            r"|^(?:show|list|display) (?:me )?(?:all )?(?:of )?(?:my |the )?(?:tasks|todos|list)$"
            r"|^list$",
            re.I,
        ),
    ),
    ("get_todo_task", re.compile(r"^(?:show|get|view) (?:me )?task\s*#?(?P<ref>\d+)$", re.I)),
    ("get_todo_task", re.compile(rf"^details (?:for|of|on|about) {_ID}$", re.I)),
    (
        "update_todo_task",
        re.compile(rf"^(?:rename|retitle) {_ID} (?:to|as|into) (?P<title>.+)$", re.I),
    ),
    (
        "complete_todo_task",
        re.compile(
            rf"^(?:finish(?:ed)?|complete|done with|mark|check off|tick off) {_ID}"
            r"(?: as (?:done|complete|completed|finished))?$",
            re.I,
        ),
    ),
    (
        "delete_todo_task",
        re.compile(rf"^(?:delete|remove|drop) {_ID}(?: from (?:my |the )?list)?$", re.I),
    ),
    (
        "create_todo_task",
        re.compile(
            r"^(?:please )?(?:add|create|remind me to|new task:?)\s+(?:a )?(?:new )?(?:task:?\s+)?"
            r"(?:to )?(?P<title>.+?)(?: to (?:my |the )?(?:todo )?list)?$",
            re.I,
        ),
    ),
]

_CONFIRM = re.compile(
    r"^(?:yes|y|yep|yeah|confirm(?:ed)?|sure)?[\s,!.]*"
    r"(?:i'?m sure|i am sure|do it|confirm(?:ed)?)?[\s!.]*$",
    re.I,
)
_SURE = re.compile(r"\b(?:i'?m sure|i am sure)\b", re.I)
_SPLIT = re.compile(r"\s*(?:[;,]|\band then\b|\bthen\b|\band also\b|\balso\b|\band\b)\s*", re.I)


@dataclass(frozen=True)
class Intent:
    """One recognised request: a tool and what it needs."""

    tool: str
    text: str
    """The words that asked for it."""
    ref: str | None = None
    """The task named: digits for an id, else a title to look up."""
    args: dict[str, Any] = field(default_factory=dict)

    @property
    def task_id(self) -> int | None:
        """The task id when the request named one by number."""
        return int(self.ref) if self.ref is not None and self.ref.isdigit() else None

    @property
    def needs_lookup(self) -> bool:
        """The request names a task by title, so its id must be found first."""
        return self.ref is not None and self.task_id is None


def _clean_ref(ref: str) -> str:
    ref = ref.strip().strip("'\"").strip()
    ref = re.sub(r"^(?:the |my )?(?:task )?#?", "", ref, flags=re.I).strip("'\" ")
    return ref


def _match(segment: str) -> Intent | None:
    text = segment.strip().rstrip(".!?").strip()
    for tool, pattern in _TABLE:
        m = pattern.match(text)
        if not m:
            continue
        groups = m.groupdict()
        ref = _clean_ref(groups["ref"]) if groups.get("ref") else None
        args: dict[str, Any] = {}
        if groups.get("title"):
            args["title"] = groups["title"].strip().strip("'\"").strip()
        if tool != "list_todo_tasks" and "ref" in pattern.groupindex and not ref:
            return None
        return Intent(tool=tool, text=text, ref=ref, args=args)
    return None


def is_confirmation(text: str) -> bool:
    """The words are only a confirmation ("yes", "yes I'm sure", "confirm")."""
    text = text.strip()
    return bool(text) and bool(_CONFIRM.match(text))


def confirms(message: str) -> bool:
    """The message carries an explicit yes ("delete task 3, yes I'm sure")."""
    if _SURE.search(message):
        return True
    return any(is_confirmation(p) for p in _SPLIT.split(message.strip()) if p)


def parse_intents(message: str) -> list[Intent]:
    """Every request in ``message`` that the decision table recognises, in order.

    A piece that is no request of its own is glued back onto the one before it, so "add bread and
    butter" is one task titled "bread and butter".
    """
    pieces = [p for p in _SPLIT.split(message.strip()) if p]
    separators = _SPLIT.findall(message.strip())
    intents: list[Intent] = []
    current = ""
    for i, piece in enumerate(pieces):
        if is_confirmation(piece):
            continue
        if current and _match(piece) is None:
            sep = separators[i - 1] if i - 1 < len(separators) else " "
            current = f"{current}{sep}{piece}"
            continue
        if current and (found := _match(current)):
            intents.append(found)
        current = piece
    if current and (found := _match(current)):
        intents.append(found)
    return intents
