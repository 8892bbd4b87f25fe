"""A tool that asks the user's yes first: ``Confirm``, what its question, its change and a
refusal say, and ``question``, one question for several such calls.

Declared on a tool with ``keel_tool(confirm=Confirm(...))`` (``keel.tools.spec``); asked by
``keel.nodes.support.confirming``.
"""  # noqa: D205

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Confirm:
    """A tool that needs the user's yes first: what the question and a refusal say."""

    verb: str
    """What the call will do, as the question asks it: "delete"."""
    done: str
    """The verb as a refusal reports it: "deleted"."""
    target: str = "task_id"
    """The argument naming what the call acts on (a ``task_id`` is checked to exist first)."""
    noun: str = "task"
    """What the target is, as the question names it."""
    to: str | None = None
    """The argument holding what the target becomes (a rename's new title), if any."""
    empty: str | None = None
    """What an empty ``to`` means, as the change says it ("no date"); None: it is never empty."""
    named: Callable[[Any], str] | None = None
    """How a question names its target ("the shopping list"); None: the noun and the target."""
    probe: Callable[[Any, str, dict[str, Any]], Awaitable[dict[str, Any]]] | None = None
    """What the call acts on as it is now, from the task store, the user and the call's
    arguments, for the question to name (its ``title``: "3 tasks"); it raises the store's error
    when there is nothing to ask about, whose message then stands in for the call. None: the
    task its ``task_id`` names, as ``get_todo_task`` gives it.
    """  # noqa: D205

    unchanged: str | None = None
    """What is said instead of asking when the call would leave its target as it is (``to``
    equal to what the target holds), formatted with the call's arguments; None: always asked."""

    def no_change(self, args: dict[str, Any], task: dict[str, Any]) -> str | None:
        """What stands in for the call when it would change nothing ('Task 4 is already called
        "buy milk": nothing to change.'), else None.
        """  # noqa: D205
        if self.unchanged is None or self.to is None or not isinstance(args.get(self.to), str):
            return None
        if " ".join(args[self.to].split()) != task.get(self.to):
            return None
        return self.unchanged.format(
            **{**args, self.target: task.get("id"), self.to: task[self.to]}
        )

    def named_target(self, target: Any) -> str:
        """The target as a question names it: "task 3", "the shopping list"."""
        return self.named(target) if self.named else f"{self.noun} {target}"

    def change(self, args: dict[str, Any], task: dict[str, Any] | None) -> dict[str, Any]:
        """What a yes to the call changes, in full: "Rename task 1: buy milk -> buy oat milk".

        ``task`` is the target as it is now (its title, and "(done)" when it is completed), so
        the words change when the task does.
        """
        target = args.get(self.target)
        title = task.get("title") if task else None
        title = title if isinstance(title, str) else None
        new = str(args[self.to]) if self.to and args.get(self.to) is not None else None
        if self.empty is not None and not (new or "").strip():
            new = self.empty
        text = f"{self.verb.capitalize()} {self.named_target(target)}"
        if new is not None:
            text += f": {title} -> {new}" if title else f" to {new}"
        elif title:
            text += f" - {title}"
        if task and task.get("completed"):
            text += " (done)"
        return {
            "action": self.verb,
            "task_id": target,
            "title": title,
            "new_title": new,
            "text": text,
        }

    def question(self, args: dict[str, Any]) -> str:
        """The question put to the user."""
        what = self.named_target(args.get(self.target))
        return f"Are you sure you want to {self.verb} {what}? (yes/no)"

    def cancelled(self, args: dict[str, Any]) -> str:
        """What the tool reports when the user said no."""
        return f"Cancelled: {self.named_target(args.get(self.target))} was not {self.done}."

    def all_cancelled(self, targets: Sequence[Any]) -> str:
        """What the offline model says when the user said no to several calls of the tool."""
        if len(targets) == 1:
            return self.cancelled({self.target: targets[0]})
        return f"Cancelled: {self.what(targets)[len(self.verb) + 1 :]} were not {self.done}."

    def what(self, targets: Sequence[Any]) -> str:
        """The verb and what it acts on: "delete task 3", "delete 3 tasks (1, 2, 4)"."""
        if len(targets) == 1:
            return f"{self.verb} {self.named_target(targets[0])}"
        listed = f" ({', '.join(str(t) for t in targets)})" if len(targets) <= NAMED_MAX else ""
        return f"{self.verb} {len(targets)} {self.noun}s{listed}"


NAMED_MAX = 12
"""A question names the tasks it is about up to this many; past it, only how many."""


def question(asks: Sequence[tuple[Confirm, dict[str, Any]]]) -> str:
    """One question for several calls that need a yes (one call: its tool's own question)."""
    if len(asks) == 1:
        confirm, args = asks[0]
        return confirm.question(args)
    by_verb: dict[Confirm, list[Any]] = {}
    for confirm, args in asks:
        by_verb.setdefault(confirm, []).append(args.get(confirm.target))
    parts = [confirm.what(targets) for confirm, targets in by_verb.items()]
    return f"Are you sure you want to {' and '.join(parts)}? (yes/no)"
