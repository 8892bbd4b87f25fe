"""A page of tasks: what the list and find tools take and return, and the offline model's words.

``list_todo_tasks`` returns a page (``task_page``: where the page is, then its tasks) that the
offline model shows with ``describe_page`` (or as a count); ``find_todo_tasks`` returns the best
matches of each description, shown with ``describe_found``. The argument types here are the
tools' schemas, so a model and an MCP client see their bounds. Used by ``keel.tools.tasks.todo``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field

from keel.checkpoints.list_fields import LIST, TODO_LIST
from keel.checkpoints.task_fields import FIELDS
from keel.checkpoints.times import OVERDUE_WORDS
from keel.tools.tasks.rows import MAX_TASK_ID

LIST_LIMIT_DEFAULT = 50
LIST_LIMIT_MAX = 100
"""How many tasks one ``list_todo_tasks`` call returns at most: a page, never the whole list."""
MORE_TASKS = "show more tasks"
"""What to say for the next page of a list."""


def _whole_number(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("a number, not true or false")
    return value


Offset = Annotated[
    int,
    Field(ge=0, le=MAX_TASK_ID, description="How many tasks to skip: a result's next_offset."),
    BeforeValidator(_whole_number),
]
PageSize = Annotated[
    int,
    Field(ge=1, le=LIST_LIMIT_MAX, description=f"How many tasks at most ({LIST_LIMIT_MAX})."),
    BeforeValidator(_whole_number),
]
TitleFilter = Annotated[
    str | None,
    Field(
        description="Only tasks whose title contains this text, in any case: the way to find a "
        "task named by its title."
    ),
]

StatusFilter = Annotated[
    Literal["open", "done"] | None,
    Field(description='Only open tasks ("open") or only completed ones ("done").'),
]


def task_page(tasks: list[dict[str, Any]], total: int, offset: int, **also: Any) -> dict[str, Any]:
    """A page of tasks as the list tool returns it: where the page is first, then its tasks.

    ``next_offset`` is the offset of the next page, None on the last one. Paging comes before the
    tasks so that a result cut short (a preview, the model's history) still says where it was.
    """
    end = offset + len(tasks)
    return {
        **also,
        "total": total,
        "offset": offset,
        "next_offset": end if tasks and end < total else None,
        "tasks": tasks,
    }


def task_line(task: dict[str, Any], listed: bool = False) -> str:
    """One task as a line of a task list: "- [ ] 2. call mom", "- [x] 4. pay rent", with its
    fields beyond the title: "- [ ] 5. call the dentist (due Fri 4 Dec 2026)"; ``listed``: under
    its list's heading, which names the list.
    """  # noqa: D205
    line = f"- [{'x' if task['completed'] else ' '}] {task['id']}. {task['title']}"
    return line + task_extras(task, listed)


def task_extras(task: dict[str, Any], listed: bool = False) -> str:
    """A task's fields beyond its title as words after it (" (shopping list; due Fri 4 Dec
    2026)"), or ""; ``listed``: without its list.
    """  # noqa: D205
    shown = [f for f in FIELDS if not (listed and f is LIST)]
    extras = [words for field in shown if (words := field.shown(task))]
    return f" ({'; '.join(extras)})" if extras else ""


def _grouped(tasks: list[dict[str, Any]]) -> list[str]:
    """Task lines under a heading for each list but the todo list, when there are several."""
    names = list(dict.fromkeys(t.get("list") or TODO_LIST for t in tasks))
    if names == [TODO_LIST]:
        return [task_line(t, listed=True) for t in tasks]
    lines: list[str] = []
    for name in names:
        lines += ["", f"{name.capitalize()} list:"] if lines else [f"{name.capitalize()} list:"]
        lines += [task_line(t, listed=True) for t in tasks if (t.get("list") or TODO_LIST) == name]
    return lines


def describe_page(page: dict[str, Any]) -> str:
    """A page of tasks as the offline model shows it, with where the page is in the list.

    The tasks are a task list (``task_line``) that reads as plain text and renders as Markdown
    (checkboxes, the ids kept: a numbered list would renumber them). A page asked for as a count
    (``asked``: "count") is told as how many there are.
    """
    tasks = page.get("tasks") or []
    total = page.get("total", len(tasks))
    which = {"open": "open ", "done": "completed "}.get(page.get("status") or "", "")
    due = " ".join(str(page.get("due") or "").split())
    late = due.casefold() in OVERDUE_WORDS
    if late:
        which, due = "overdue ", ""
    if page.get("asked") == "count":
        return _count(total, tasks, which)
    on = page.get("list")
    if not tasks:
        if total:
            return f"No more tasks: you have {total:,} in all."
        where = f" on your {on} list" if on else ""
        if late:
            return f"Nothing{where} is overdue."
        if due:
            return f"Nothing{where} is due {due}."
        if which:
            return f"You have no {which}tasks{where}."
        return f"Your {on} list is empty." if on else "Your list is empty."
    lines = [task_line(t, listed=True) for t in tasks] if on else _grouped(tasks)
    first = page.get("offset", 0) + 1
    shown = f"showing {first:,}-{first + len(tasks) - 1:,} of {total:,}"
    if page.get("next_offset") is not None:
        lines.append(f'\n({shown}; say "{MORE_TASKS}" for the next ones)')
    elif first > 1:
        lines.append(f"\n({shown}; that was the last of them)")
    heading = f"Your {which}tasks" + (f" on the {on} list" if on else "")
    heading += f" due {due}" if due else ""
    return f"{heading}:\n" + "\n".join(lines)


def _count(total: int, tasks: list[dict[str, Any]], which: str) -> str:
    noun = f"{which}task" + ("" if total == 1 else "s")
    if which or not total or len(tasks) < total:
        return f"You have {total:,} {noun}."
    done = sum(1 for t in tasks if t["completed"])
    if total == 1:
        return f"You have 1 {'completed' if done else 'open'} task."
    if done in (0, total):
        return f"You have {total:,} {noun}, all {'done' if done else 'open'}."
    return f"You have {total:,} {noun}: {total - done:,} open, {done:,} done."


LIST_DESCRIPTION = (
    "List the user's tasks by id, one page at a time. The result holds the page (tasks), how "
    "many tasks there are (total), the page's offset, and next_offset: pass it as offset for the "
    "next page (null on the last page)."
)


FIND_MAX = 100
"""Descriptions one find call takes at most."""
FOUND_MAX = 5
"""Tasks a find call returns at most for each description: the best matches."""
DESCRIPTION_MAX_CHARS = 200


def _listed(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


Descriptions = Annotated[
    list[str],
    Field(
        min_length=1,
        max_length=FIND_MAX,
        description="What the tasks are, in the user's words: one entry per task sought.",
    ),
    BeforeValidator(_listed),
]


def describe_found(result: dict[str, Any]) -> str:
    """What the offline model says about a search: the matching tasks, or that there are none."""
    parts = []
    on = result.get("list")
    for found in result.get("found") or []:
        tasks = found.get("tasks") or []
        what = found.get("description", "")
        if not tasks:
            parts.append(f"Nothing on your {f'{on} ' if on else ''}list matches '{what}'.")
            continue
        where = f" on the {on} list" if on else ""
        lines = [task_line(t, listed=bool(on)) for t in tasks]
        parts.append(f"Tasks about '{what}'{where}:\n" + "\n".join(lines))
    return "\n".join(parts)


def describe_lists(result: dict[str, Any]) -> str:
    """The user's lists as the offline model names them, with how many tasks are open on each."""
    lines = []
    for found in result.get("lists") or []:
        open_, held = found.get("open", 0), found.get("tasks", 0)
        counted = f"{open_:,} open" + (f" of {held:,}" if held != open_ else "")
        lines.append(f"- {found['list']} ({counted})")
    return "Your lists:\n" + "\n".join(lines)
