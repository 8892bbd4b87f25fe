"""The todo tools: what the agent may do with a user's tasks, each declared once.

Each tool is an async function over the task store, declared with ``keel_tool`` together with
everything keel needs to know about it (``keel.tools.spec``). ``user_id`` and ``store`` are
injected by keel and hidden from the model's schema, so a model can never name another user.
``TODO_TOOLS`` is the one list; how a call runs is ``keel.tools.calls.run_tool_call``.
"""

from __future__ import annotations

from typing import Annotated, Any

from langchain_core.tools import BaseTool, InjectedToolArg
from pydantic import BeforeValidator

from keel.tools.matching import rank
from keel.tools.pages import (
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
    describe_page,
    task_page,
)
from keel.tools.spec import Confirm, keel_tool
from keel.tools.store import TaskStore

UserId = Annotated[str, InjectedToolArg]
Store = Annotated[TaskStore, InjectedToolArg]


def _not_a_bool(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("a task id is a number, not true or false")
    return value


TaskId = Annotated[int, BeforeValidator(_not_a_bool)]
"""A task id as tools take it: a whole number (``true`` is not 1)."""


@keel_tool(
    mutates=True,
    phrasings=[
        r"^(?:please )?(?:add|create|remind me to|new task:?)\s+(?:a )?(?:new )?(?:task:?\s+)?"
        r"(?:to )?(?P<title>.+?)(?: to (?:my |the )?(?:todo )?list)?$",
        r"^(?:add|create|make|new|put|write|jot|note)(?: down| in| on)?\s*[:\-\u2013]?\s*"
        r"(?:(?:a|an|some|these|a few|two|three|four|five|six|\d+|another|one more) )?(?:new )?"
        r"(?:(?:task|todo|to-do|item|reminder|entry|thing|note)s?(?: called| named| titled"
        r"| saying| that says| for| to| about)?\s*[:\-\u2013]?\s+|the following(?: (?:tasks"
        r"|things|items|todos))?\s*:?\s+)(?P<title>.+?)"
        r"(?: to (?:my |the )?(?:todo |to-do )?list)?$",
        r"^(?:add|new|todo|to-?do|task)\s*[:\-\u2013]+\s*(?P<title>.+)$",
    ],
    examples=[
        "put {title} on my list",
        "put {title} on the list",
        "put {title} on my todo list",
        "put {title} on my to-do list",
        "put {title} down",
        "stick {title} on my list",
        "throw {title} on my list",
        "throw {title} on the list",
        "add {title} to the list",
        "note to self: {title}",
        "note: {title}",
        "note {title}",
        "todo: {title}",
        "to do: {title}",
        "to-do: {title}",
        "task: {title}",
        "new task {title}",
        "new todo: {title}",
        "new todo {title}",
        "new item: {title}",
        "new: {title}",
        "i need to remember to {title}",
        "i have to remember to {title}",
        "remember to {title}",
        "don't let me forget to {title}",
        "don't let me forget {title}",
        "don't forget to {title}",
        "make sure i {title}",
        "remind me about {title}",
        "remind me of {title}",
        "add a reminder to {title}",
        "set a reminder to {title}",
        "create a reminder to {title}",
        "add a task to {title}",
        "add a task for {title}",
        "add a todo to {title}",
        "add a todo for {title}",
        "make a task to {title}",
        "make a task for {title}",
        "create a task to {title}",
        "create a task for {title}",
        "make a note to {title}",
        "make a note: {title}",
        "jot down {title}",
        "write down {title}",
        "note down {title}",
        "i need to {title}",
        "i have to {title}",
        "i've got to {title}",
        "i gotta {title}",
        "i must {title}",
        "i should {title}",
        "need to {title}",
        "gotta {title}",
        "got to {title}",
        "have to {title}",
        "i want to add {title}",
        "add in {title}",
        "also add {title}",
        "one more: {title}",
        "plus {title}",
        "add on {title}",
    ],
    reply="Created task: {title}",
    example='add a task ("Add buy milk")',
)
async def create_todo_task(title: str, user_id: UserId, store: Store) -> dict[str, Any]:
    """Create a new task with the given title."""
    return await store.create(user_id, title)


def _one_task(task: dict[str, Any]) -> str:
    return f"Task {task['id']}: {task['title']} ({'completed' if task['completed'] else 'open'})"


@keel_tool(
    phrasings=[
        r"^(?:show|get|view|open|display|see|describe|check) (?:me )?(?:(?:task|number|#)\s*)?#?"
        r"(?P<ref>\d+)$",
        r"^(?:(?:give|show|get|tell) me )?(?:the )?details (?:for|of|on|about) {task}$",
        r"^(?:what'?s|what is|what was|whats|which is) (?:task|number|#)\s*#?(?P<ref>\d+)"
        r"(?: again)?$",
        r"^(?:task|#)\s*#?(?P<ref>\d+)\??$",
        r"^(?:show|view|open|display|see|get|what'?s|what is|what was|tell me about)(?: me)?"
        r" (?:the|my|that)"
        r" (?P<ref>.+?) (?:one|task|item|todo|entry)$",
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
        "let me see {task}",
        "remind me what {task} is",
    ],
    reply=_one_task,
    example='show one ("Show task 2")',
)
async def get_todo_task(task_id: TaskId, user_id: UserId, store: Store) -> dict[str, Any]:
    """Show the details of one task by its id."""
    return await store.get(user_id, task_id)


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
        r"^(?:what|which|show|list|display|view|see|give me|tell me|anything)\b"
        r"(?=.*?\b(?:(?P<status__open>left|remain|remains|remaining|still|open|pending|not done"
        r"|unfinished|incomplete|outstanding|to do|undone|haven'?t|not finished|not yet)"
        r"|(?P<status__done>done|finished|finish|completed?|ticked|checked|crossed|already))\b)"
        r"(?!.*\b(?:task|number|#) ?\d).*$",
        r"^(?:show|see|view|display|pull up|bring up|open|read|give|get|check|print|list)"
        r"(?: me| out)?(?: (?:all|everything) (?:of|on|in))? (?:the |my |all |all my |all the "
        r"|all of my )?(?:whole |entire |full |current |complete )?(?:todo |to-do |to do )?"
        r"(?:list|tasks|todos|to-dos|items|stuff|things)(?: again| now| so far)?$",
        r"^how (?:long|big) is (?:my|the) (?:todo )?list$",
        r"^(?:total )?(?P<ask__count>how many|number of|count of|count)\b"
        r"(?=.*\b(?:tasks?|todos?|to-dos?"
        r"|things|items|left|done|open|remaining|completed?|finished|list|do i have|have i|did i"
        r"|are there|still)\b)(?=(?:.*?\b(?P<status__done>done|completed?|finished|ticked off"
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
    ],
    reply=describe_page,
    prompt="A task named by what it is: call find_todo_tasks first to find its id.",
    example='list them ("What\'s on my list?")',
)
async def list_todo_tasks(
    user_id: UserId,
    store: Store,
    offset: Offset = 0,
    limit: PageSize = LIST_LIMIT_DEFAULT,
    title_contains: TitleFilter = None,
    status: StatusFilter = None,
) -> dict[str, Any]:
    """A page of the user's tasks (of those whose title contains ``title_contains``, if given)."""
    if title_contains is not None and title_contains.strip():
        tasks, total = await store.find(user_id, title_contains, offset, limit)
        return task_page(tasks, total, offset, title_contains=title_contains)
    done = None if status is None else status == "done"
    total = await store.count(user_id, done)
    also = {"status": status} if status else {}
    return task_page(await store.list(user_id, offset, limit, done), total, offset, **also)


@keel_tool(
    mutates=True,
    confirm=Confirm("rename", "renamed"),
    phrasings=[
        r"^(?:rename|retitle|reword|relabel) {task} (?:to|as|into) {title}$",
        r"^(?:rename|retitle|reword|relabel) {task}: {title}$",
        r"^(?:change|update|edit|fix|correct|alter|modify|switch|amend) (?:the (?:name|title|text|"
        r"wording) of )?{task}(?:'s (?:name|title|text))?(?: (?:to say|to read|to be|so it says"
        r"|so that it says|to|into)|:) {title}$",
        r"^{task} should (?:be|say|read)(?: called| named| renamed to| changed to)? {title}$",
        r"^make {task} (?:say|read|be called|be named) {title}$",
        r"^(?:replace|swap) {task} (?:with|for|by) {title}$",
        r"^call {task} {title} instead$",
        r"^{task} -+> ?{title}$",
    ],
    reply="Renamed task {id} to: {title}",
    example='rename one ("Rename task 2 to call mom")',
)
async def update_todo_task(
    task_id: TaskId, title: str, user_id: UserId, store: Store
) -> dict[str, Any]:
    """Rename a task."""
    return await store.rename(user_id, task_id, title)


@keel_tool(
    mutates=True,
    phrasings=[
        r"^(?:finish(?:ed)?|complete(?:d)?|done with|mark|check off|tick off|cross off|close"
        r"|tick|check|strike off|mark off|i'?ve finished|i finished|i completed|i'?ve completed"
        r"|i'?m done with|i am done with|we'?re done with|i did|i'?ve done|all done with"
        r"|just finished|just completed|just did|done) {task}"
        r"(?: as (?:done|complete|completed|finished|closed)| (?:done|complete|completed|off"
        r"|finished|as done too))?$",
        r"^{task}(?: (?:is|are|was|were|has been|have been)|'s) (?:now )?(?:all )?(?:done|finished"
        r"|complete|completed|sorted|taken care of|dealt with|handled|over)$",
        r"^{task}:? (?:done|finished|complete|completed|sorted)$",
        r"^(?:cross|tick|check|mark|strike) {task} off(?: (?:my|the) list)?$",
        r"^(?:set|mark|flag) {task} (?:to|as) (?:done|complete|completed|finished)$",
    ],
    told_done=True,
    reply="Completed task: {title}",
    example='complete one ("Complete 2")',
)
async def complete_todo_task(task_id: TaskId, user_id: UserId, store: Store) -> dict[str, Any]:
    """Mark a task as completed."""
    return await store.complete(user_id, task_id)


@keel_tool(
    mutates=True,
    confirm=Confirm("delete", "deleted"),
    phrasings=[
        r"^(?:delete|del|remove|drop|erase|trash|bin|nuke|ditch|dump|scrap|scratch|wipe|clear"
        r"|get rid of|forget about|forget|cancel|kill|lose|toss|axe|delete off|wipe out|strike"
        r"|throw out|throw away|clear out|empty) {task}"
        r"(?: (?:from|off) (?:my |the )?(?:todo |to-do )?"
        r"list)?(?: entirely| completely| for good| altogether| too| as well)?$",
        r"^(?:take|cross|strike) {task} (?:off|out of|from) (?:my |the )?(?:todo |to-do )?list$",
        r"^take off {task}$",
        r"^(?:i )?(?:don'?t|do not|no longer) need {task}(?: anymore| any more)?$",
        r"^{task} (?:is|are) no longer (?:needed|necessary|relevant)$",
        r"^{task} can go$",
        r"^(?:never ?mind|nevermind) (?:about )?{task}$",
    ],
    reply="Deleted task {id}: {title}",
    example='delete one ("Delete task 2")',
)
async def delete_todo_task(task_id: TaskId, user_id: UserId, store: Store) -> dict[str, Any]:
    """Delete a task."""
    return await store.delete(user_id, task_id)


@keel_tool(
    phrasings=[
        r"^(?:is there |do i have |have i got |got |are there )?(?:anything|something|any tasks?"
        r"|a task|tasks|any todos?|an? (?:item|todo|entry)) (?:about|on|for|with|regarding|re"
        r"|mentioning|to do with|that mentions|called|named|like) (?P<descriptions>.+?)"
        r"(?: on (?:my|the) list| in (?:my|the) list| on there| in there| on it)?$",
        r"^(?:search|look|hunt)(?: my list| the list)? for (?P<descriptions>.+)$",
        r"^(?:search(?: my list)?|find|look up|lookup) (?P<descriptions>.+?)$",
        r"^(?:is|are) (?P<descriptions>.+?) (?:on|in) (?:my|the) (?:todo |to-do )?list$",
        r"^did i (?:add|put|already add|already put) (?P<descriptions>.+?)(?: on (?:my|the) list"
        r"| to (?:my|the) list)?$",
        r"^(?:what about|any) (?P<descriptions>.+?) (?:tasks|todos|ones)$",
    ],
    reply=describe_found,
    example='find one ("Anything about the dentist?")',
)
async def find_todo_tasks(
    descriptions: Descriptions, user_id: UserId, store: Store
) -> dict[str, Any]:
    """Find the user's tasks by what they are ("the milk one", "calling mom").

    For each description, the tasks whose titles match it best (the same words, their
    inflections, their spelling), best first, each with a score: 2 for the title itself, 1 for
    every word found. When none matches, ``closest`` is the nearest title there is.
    """
    wanted = [str(d)[:DESCRIPTION_MAX_CHARS] for d in descriptions]
    best: list[list[dict[str, Any]]] = [[] for _ in wanted]
    nearest: list[dict[str, Any] | None] = [None for _ in wanted]
    async for batch in store.batches(user_id):  # the titles are read once for every description
        for i, description in enumerate(wanted):
            found, near = rank(description, best[i] + batch, FOUND_MAX)
            known = nearest[i]
            if near and (known is None or near["score"] > known["score"]):
                nearest[i] = near
            best[i] = found
    return {
        "found": [
            {"description": d, "tasks": b, "closest": None if b else nearest[i]}
            for i, (d, b) in enumerate(zip(wanted, best, strict=True))
        ]
    }


TODO_TOOLS: list[BaseTool] = [
    create_todo_task,
    get_todo_task,
    list_todo_tasks,
    find_todo_tasks,
    update_todo_task,
    complete_todo_task,
    delete_todo_task,
]
"""The one list of the todo tools: the agent binds it, MCP serves it, the offline model and the
plan read their phrasings, the system prompt their lines (each tool's ``ToolSpec``)."""
GET, LIST, FIND = get_todo_task.name, list_todo_tasks.name, find_todo_tasks.name
"""The tools other code calls by name: a confirmation checks its task with GET; the offline
model finds a task named by what it is with FIND, and a selection ("all the done ones") with
LIST."""
