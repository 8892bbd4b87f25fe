"""The todo tools that read tasks: show one, list a page, find by what they are, each declared once.

Declared like the tools that change tasks (``keel.tools.tasks.changes``); the shapes of their
results and the offline model's words for them are ``keel.tools.tasks.pages``.
"""

from __future__ import annotations

from typing import Any

from keel.checkpoints.task_fields import DueFilter, ListName
from keel.tools.spec import keel_tool
from keel.tools.tasks.arguments import Store, TaskId, UserId
from keel.tools.tasks.matching import rank
from keel.tools.tasks.pages import (
    DESCRIPTION_MAX_CHARS,
    FOUND_MAX,
    LIST_DESCRIPTION,
    LIST_LIMIT_DEFAULT,
    Descriptions,
    Offset,
    PageSize,
    StatusFilter,
    TitleFilter,
    describe_found,
    describe_lists,
    describe_page,
    task_extras,
    task_page,
)


def _one_task(task: dict[str, Any]) -> str:
    state = "completed" if task["completed"] else "open"
    return f"Task {task['id']}: {task['title']} ({state}){task_extras(task)}"


@keel_tool(
    phrasings=[
        r"^(?:show|get|view|open|display|see|describe|check) (?:me )?(?:(?:task|number|no\.?|#)"
        r"\s*){0,3}#?(?P<ref>\d+)$",
        r"^(?:(?:give|show|get|tell) me )?(?:the )?details (?:for|of|on|about) {task}$",
        r"^(?:what'?s|what is|what was|whats|which is) (?:task|number|#)\s*#?(?P<ref>\d+)"
        r"(?: again)?$",
        r"^(?:task|#)\s*#?(?P<ref>\d+)\??$",
        r"^(?:show|view|open|display|see|get|what'?s|what is|what was|tell me about)(?: me)?"
        r" (?:the|my|that)"
        r" (?P<ref>.+?) (?:one|task|item|todo|entry|thing|reminder)$",
    ],
    examples=[
        "tell me about {task}",
        "tell me more about {task}",
        "info on {task}",
        "info for {task}",
        "more about {task}",
        "details on {task}",
        "what does {task} say",
        "what about task {task}",
        "remind me what {task} is",
    ],
    intent="get",
    reply=_one_task,
    said="Looked at task {id}: {title}",
    example='show one ("Show task 2")',
    step="Show {task}",
    on_request=True,
)
async def get_todo_task(task_id: TaskId, user_id: UserId, store: Store) -> dict[str, Any]:
    """Show the details of one task by its id."""
    return await store.get(user_id, task_id)


def _listed(shown: int, total: int) -> str:
    """A listing as one sentence: "Listed 3 tasks", "Listed 50 of 120 tasks", "Listed no tasks"."""
    if not total:
        return "Listed no tasks"
    tasks = "task" if total == 1 else "tasks"
    return f"Listed {total:,} {tasks}" if shown >= total else f"Listed {shown:,} of {total:,} tasks"


@keel_tool(
    description=LIST_DESCRIPTION,
    phrasings=[
        r"^(?P<more>(?:show|list|display|give|see)(?: me)? (?:some |the )?(?:more|next)"
        r"(?: (?:tasks|todos|ones|page|page of tasks))?(?: please)?"
        r"|(?:more|next) (?:tasks|todos|page)(?: please)?)$",
        r"^(?:what'?s|what is) (?:on )?(?:my|the) (?:todo )?list\??$"
        r"|^show (?:me )?(?:all|everything)(?: (?:my )?tasks)?$"
        r"|^(?:show|list|display) (?:me )?(?:all )?(?:of )?(?:my |the )?(?:tasks|todos|list)$"
        r"|^list$",
        r"^(?:(?:what'?s|what is|whats|what are|show(?: me)?|list|see|view|display|give me)"
        r" )?(?:the |all )?(?:my )?(?:(?P<status__open>open|remaining|unfinished|incomplete|pending"
        r"|outstanding|undone|uncompleted|left over)|(?P<status__done>completed|done|finished"
        r"|checked off|ticked off|closed)) (?:tasks|todos|ones|items|things|stuff)(?: are there)?$",
        r"^(?:what'?s|what is|whats|what do i have|what have i got|what'?s still|what is still"
        r"|anything|is there anything|what else is|what remains|what'?s remaining)"
        r"(?P<status__open> left| remaining| still open| open| pending| outstanding| undone"
        r"| not done| unfinished| to do| left to do)?(?: to do| on my list| on the list| for me)?$"
        r"|^what (?P<status__open>remains)$",
        r"^(?:what|which)(?: tasks| ones| things)? (?:do|did|have) i (?:still )?"
        r"(?:(?P<status__open>have(?: left)? to do|still (?:have|need) to do|need to do|got left"
        r"|not done|have left|still need to do|haven'?t done)|(?P<status__done>done|finished"
        r"|completed|checked off|ticked off|get done|already done))(?: yet| so far| today)?$",
        r"^(?:what|which)(?: tasks| ones| things)? (?:haven'?t|have not|didn'?t) i "
        r"(?P<status__open>done|finished|completed)(?: yet)?$"
        r"|^(?:what|which)(?: tasks| ones| things)? (?:is|are|'?s) "
        r"(?:(?P<status__done>done|finished|completed|checked off)|(?P<status__open>not done"
        r"|still open|open|left|pending|unfinished|remaining))(?: so far| yet)?$",
        r"^(?!.*\b(?:able to|can you|could you|you do|u do)\b)"
        r"(?:what|which|show|list|display|view|see|give me|tell me|anything)\b"
        r"(?=.*?\b(?:(?P<status__open>left|remain|remains|remaining|still|open|pending|not done"
        r"|unfinished|incomplete|outstanding|to do|undone|haven'?t|not finished|not yet)"
        r"|(?P<status__done>done|finished|finish|completed?|ticked|checked|crossed|already))\b)"
        r"(?!.*\b(?:task|number|#) ?\d).*$",
        r"^(?:show|see|view|display|pull up|bring up|open|read|give|get|check|print|list|gimme)"
        r"(?: me| out)?(?: (?:all|everything) (?:of|on|in))? (?:the |my |all |all my |all the "
        r"|all of my )?(?:whole |entire |full |current |complete )?(?:todo |to-do |to do )?"
        r"(?:list|tasks|todos|to-dos|items|stuff|things)(?: again| now| so far)?$",
        r"^how (?:long|big) is (?:my|the) (?:todo )?list$",
        r"^(?:total )?(?P<ask__count>how many|number of|count of|count)\b"
        r"(?=.*\b(?:tasks?|todos?|to-dos?"
        r"|things|items|left|done|open|remaining|completed?|finished|list|do i have|have i|did i"
        r"|are there|still|outstanding|pending|unfinished|incomplete)\b)"
        r"(?=(?:.*?\b(?P<status__done>done|completed?|finished|ticked off"
        r"|checked off|crossed off)\b)?)(?=(?:.*?\b(?P<status__open>left|open|remaining|still"
        r"|to do|pending|unfinished|not done|outstanding|need to do)\b)?).*$",
        r"^what'?s (?:my|the) (?:task |todo )?count$",
    ],
    examples=[
        "what do i have",
        "what do i have to do",
        "what do i need to do",
        "what are my tasks",
        "what tasks do i have",
        "what's on my plate",
        "what's on the agenda",
        "my tasks",
        "my list",
        "my todos",
        "tasks",
        "todos",
        "list my tasks",
        "list everything",
        "show me everything",
        "show everything",
        "show the list",
        "show my list",
        "show me my list",
        "show me the list",
        "let me see my list",
        "let me see the list",
        "let me see my tasks",
        "see my tasks",
        "see my list",
        "view my list",
        "view my tasks",
        "read me my list",
        "read my list",
        "what's on my todo list",
        "what's on my to-do list",
        "what is on my list",
        "what's in my list",
        "show me what's on my list",
        "what have i got on my list",
        "what do i have on my list",
        "get my list",
        "get my tasks",
        "give me my list",
        "display my list",
        "full list",
        "what have i got on",
        "what's on",
        "what's on today",
        "what have i got on today",
        "what am i doing today",
        "what's next",
        "the list",
        "list all",
        "list all my tasks",
        "list all tasks",
        "show all my tasks",
        "show me all my tasks",
        "what's there",
        "what's on there",
        "what's on it",
        "what's on my list today",
        "what's on my todo list today",
        "show me my todos",
        "show todos",
        "show me my tasks",
        "show more",
        "show more tasks",
        "show me more",
        "more tasks",
        "next page",
        "the next page",
        "next page please",
        "more please",
        "what's due {when}",
        "what is due {when}",
        "what do i have due {when}",
        "what do i need to do {when}",
        "anything due {when}",
        "show me what's due {when}",
        "which tasks are due {when}",
        "what's {late}",
        "which tasks are {late}",
        "anything {late}",
        "show me my {late} tasks",
        "what am i {late} on",
        "what's on my {list} list",
        "what's on the {list} list",
        "show me the {list} list",
        "show my {list} list",
        "read me my {list} list",
        "what do i need from the {list} list",
        "open the {list} list",
        "what's left on my {list} list",
        "what's due {when} on my {list} list",
    ],
    intent="list",
    reply=describe_page,
    said=lambda page: _listed(len(page["tasks"]), page["total"]),
    prompt="A task named by what it is: find_todo_tasks gives its id.",
    example='list them ("What\'s on my list?")',
    step="List the tasks",
    heard=("list", "due"),
    lean_args=("offset", "status"),
)
async def list_todo_tasks(
    user_id: UserId,
    store: Store,
    offset: Offset = 0,
    limit: PageSize = LIST_LIMIT_DEFAULT,
    title_contains: TitleFilter = None,
    status: StatusFilter = None,
    due: DueFilter = None,
    list: ListName = None,  # noqa: A002 - the argument as people and models name it
) -> dict[str, Any]:
    """A page of the user's tasks in their lists' order (of those whose title contains
    ``title_contains``, if given; on one list, with ``list``; of the open ones due then, by when
    they are due, with ``due``).
    """  # noqa: D205
    on = {"list": store.list_named(list)} if list and list.strip() else {}
    if title_contains is not None and title_contains.strip():
        tasks, total = await store.find(user_id, title_contains, offset, limit, list)
        return task_page(tasks, total, offset, title_contains=title_contains, **on)
    done = None if status is None else status == "done"
    total = await store.count(user_id, done, due, list)
    also = {k: v for k, v in (("status", status), ("due", due)) if v}
    tasks = await store.list(user_id, offset, limit, done, due, list)
    return task_page(tasks, total, offset, **also, **on)


@keel_tool(
    phrasings=[
        r"^(?:is there |do i have |have i got |got |are there )?(?:anything|something|any tasks?"
        r"|a task|tasks|any todos?|an? (?:item|todo|entry)) (?:about|on|for|with|regarding|re"
        r"|mentioning|to do with|that mentions|called|named|like|related to|concerning)"
        r" (?P<descriptions>.+?)"
        r"(?: on (?:my|the) list| in (?:my|the) list| on there| in there| on it)?$",
        r"^(?:search|look|hunt)(?: my list| the list)? for (?P<descriptions>.+)$",
        r"^(?:search(?: my list)?|find|look up|lookup) (?P<descriptions>.+?)$",
        r"^(?:is|are) (?P<descriptions>.+?) (?:on|in) (?:my|the) (?:todo |to-do )?list$",
        r"^did i (?:add|put|already add|already put) (?P<descriptions>.+?)(?: on (?:my|the) list"
        r"| to (?:my|the) list)?$",
        r"^(?:what about|any) (?P<descriptions>.+?) (?:tasks|todos|ones)$",
        r"^(?:is there )?(?:anything|something|any tasks?) (?P<descriptions>.+?)[- ]related"
        r"(?: on there| on (?:my|the) list| in there)?$",
    ],
    intent="find",
    examples=[
        "is {descriptions} on my list",
        "is {descriptions} on my {list} list",
        "do i have {descriptions} on the {list} list",
        "is there {descriptions} on my {list} list",
        "did i put {descriptions} on the {list} list",
        "do i have anything about {descriptions}",
        "did i add {descriptions}",
        "find {descriptions}",
        "search for {descriptions}",
    ],
    reply=describe_found,
    said=lambda found: (
        "Looked for "
        + ", ".join(f"“{f['description']}” ({len(f['tasks'])} found)" for f in found["found"])
    ),
    example='find one ("Anything about the dentist?")',
    step="Look for {descriptions}",
)
async def find_todo_tasks(
    descriptions: Descriptions,
    user_id: UserId,
    store: Store,
    list: ListName = None,  # noqa: A002 - the argument as people and models name it
) -> dict[str, Any]:
    """Find the user's tasks by what they are ("the milk one", "calling mom").

    Only those on one list when ``list`` names it. For each description, the tasks whose titles
    match it best (the same words, their inflections, their spelling), best first, each with a
    score: 2 for the title itself, 1 for every word found. When none matches, ``closest`` is the
    nearest title there is.
    """
    wanted = [str(d)[:DESCRIPTION_MAX_CHARS] for d in descriptions]
    best: list[list[dict[str, Any]]] = [[] for _ in wanted]
    nearest: list[dict[str, Any] | None] = [None for _ in wanted]
    async for batch in store.batches(user_id, list):  # titles read once for every description
        for i, description in enumerate(wanted):
            found, near = rank(description, best[i] + batch, FOUND_MAX)
            known = nearest[i]
            if near and (known is None or near["score"] > known["score"]):
                nearest[i] = near
            best[i] = found
    on = {"list": store.list_named(list)} if list and list.strip() else {}
    return {
        **on,
        "found": [
            {"description": d, "tasks": b, "closest": None if b else nearest[i]}
            for i, (d, b) in enumerate(zip(wanted, best, strict=True))
        ],
    }


@keel_tool(
    intent="show_lists",
    examples=[
        "which lists do i have",
        "what lists do i have",
        "what lists have i got",
        "show me my lists",
        "show all my lists",
        "list my lists",
        "what lists are there",
        "how many lists do i have",
        "do i have a {list} list",
        "my lists",
    ],
    reply=describe_lists,
    said=lambda found: f"Listed {len(found['lists'])} lists",
    example='see your lists ("Which lists do I have?")',
    step="List the lists",
    on_request=True,
)
async def list_todo_lists(user_id: UserId, store: Store) -> dict[str, Any]:
    """The user's lists (the todo list, and each list they have put a task on), with how many
    tasks each holds and how many are open.
    """  # noqa: D205
    return {"lists": await store.lists(user_id)}
