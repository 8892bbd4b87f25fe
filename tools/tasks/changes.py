"""The todo tools that change a task: create, rename, schedule, repeat, complete and delete.

Moving a task and clearing a list are in ``keel.tools.tasks.lists``. Each tool is an async
function over the task store, declared with ``keel_tool`` together with how people ask for it,
what it asks first and how the offline model words its result (``keel.tools.spec``). The one
list of the tools is ``keel.tools.tasks.todo.TODO_TOOLS``.
"""

from __future__ import annotations

from typing import Any

from keel.checkpoints.task_fields import Due, ListName, Place, Repeat
from keel.tools.confirm import Confirm
from keel.tools.spec import keel_tool
from keel.tools.tasks.arguments import Store, TaskId, UserId
from keel.tools.tasks.pages import task_extras


@keel_tool(
    mutates=True,
    phrasings=[
        r"^(?:add|create|make|new|put|write|jot|note)(?: down| in| on)?\s*[:\-\u2013]?\s*"
        r"(?:(?:a|an|some|these|a few|two|three|four|five|six|\d+|another|one more) (?:new )?"
        r"(?:task|todo|to-do|item|reminder|entry|thing|note|one)s?(?: called| named| titled"
        r"| saying| that says| for| to| about)?\s*[:\-\u2013]?\s+"
        r"|(?:new )?(?:task|todo|to-do|item|reminder|entry|thing|note|one)s?(?:(?: called"
        r"| named| titled| saying| that says| for| to| about)\s*[:\-\u2013]?|\s*[:\-\u2013])\s+"
        r"|the following(?: (?:tasks|things|items|todos))?\s*:?\s+)(?P<title>.+?)"
        r"(?: to (?:my |the )?(?:todo |to-do )?list)?$",
        r"^(?:add|new|todo|to-?do|task)\s*[:\-\u2013]+\s*(?P<title>.+)$",
        r"^(?:please )?(?:add|create|remind me to|new task:?)\s+(?:a )?(?:new )?(?:task:?\s+)?"
        r"(?:to )?(?P<title>.+?)(?: to (?:my |the )?(?:todo )?list)?$",
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
        "remind me to {title} {due}",
        "remind me {due} to {title}",
        "add {title} {due}",
        "{title} {due}",
        "i need to {title} {due}",
        "put {title} on my list for {when}",
        "add {title} due {when}",
        "set a reminder to {title} {due}",
        "don't let me forget to {title} {due}",
        "{due} remind me to {title}",
        "new task: {title}, due {when}",
        "add {title} to my {list} list",
        "add {title} to the {list} list",
        "put {title} on my {list} list",
        "put {title} on the {list} list",
        "we need {title}, put it on the {list} list",
        "add {title} to my {list} list {due}",
        "put {title} {place}",
        "add {title} {place}",
        "add {title}, it's {urgent}",
        "put {title} {place} of my {list} list",
        "add {title} to my {list} list {place}",
        "{title} {every}",
        "add {title} {every}",
        "remind me to {title} {every}",
        "i need to {title} {every}",
        "{every} i have to {title}",
        "put {title} on my list {every}",
        "add a recurring task to {title} {every}",
        "set a repeating reminder to {title} {every}",
    ],
    intent="create",
    reply=lambda task: f"Created task: {task['title']}{task_extras(task)}",
    said=lambda task: f"Created task {task['id']}: {task['title']}{task_extras(task)}",
    example='add a task ("Add buy milk")',
    step="Add {title}",
    heard=("list", "place", "due", "repeat"),
)
async def create_todo_task(
    title: str,
    user_id: UserId,
    store: Store,
    due: Due = None,
    list: ListName = None,  # noqa: A002 - the argument as people and models name it
    place: Place = None,
    repeat: Repeat = None,
) -> dict[str, Any]:
    """Create a new task. It goes on a named list, at a place in it, due and repeating as the
    user said.
    """  # noqa: D205
    return await store.create(user_id, title, due=due, list=list, place=place, repeat=repeat)


@keel_tool(
    mutates=True,
    confirm=Confirm(
        "rename",
        "renamed",
        to="title",
        unchanged="Task {task_id} is already called “{title}”: nothing to change.",
    ),
    intent="rename",
    examples=[
        "rename task {task} to {title}",
        "rename {task} to {title}",
        "change {task} to {title}",
        "change {task} on my {list} list to {title}",
        "update {task} to say {title}",
        "replace {task} with {title}",
    ],
    phrasings=[
        r"^(?:rename|retitle|reword|relabel) {task} (?:to|as|into) {title}$",
        r"^(?:rename|retitle|reword|relabel) {task}(?::| -{1,3}| \u2013) {title}$",
        r"^(?:change|update|edit|fix|correct|alter|modify|switch|amend) (?:the (?:name|title|text|"
        r"wording) of )?{task}(?:'s (?:name|title|text))?(?: (?:to say|to read|to be|so it says"
        r"|so that it says|to|into)|:| -{1,3}| \u2013) {title}$",
        r"^{task} should (?:be|say|read)(?: called| named| renamed to| changed to)? {title}$",
        r"^make {task} (?:say|read|be called|be named) {title}$",
        r"^(?:replace|swap) {task} (?:with|for|by) {title}$",
        r"^call {task} {title} instead$",
        r"^{task} ?(?:-{1,3}>|\u2192) ?{title}$",
        r"^(?:rename|change|update|edit) {task} ?(?:-{1,3}>|\u2192) ?{title}$",
    ],
    reply="Renamed task {id} to: {title}",
    said="Renamed task {id}: {title}",
    example='rename one ("Rename task 2 to call mom")',
    step="Rename {task} to {title}",
)
async def update_todo_task(
    task_id: TaskId, title: str, user_id: UserId, store: Store
) -> dict[str, Any]:
    """Rename a task."""
    return await store.rename(user_id, task_id, title)


@keel_tool(
    mutates=True,
    confirm=Confirm("reschedule", "rescheduled", to="due", empty="no date"),
    intent="schedule",
    examples=[
        "move {task} to {when}",
        "push {task} to {when}",
        "reschedule {task} to {when}",
        "reschedule {task} for {when}",
        "change the date of {task} to {when}",
        "make {task} due {when}",
        "set {task} for {when}",
        "{task} is due {when}",
        "postpone {task} until {when}",
        "put off {task} until {when}",
        "move the deadline of {task} to {when}",
    ],
    reply=lambda task: f"Rescheduled task {task['id']}: {task['title']}{task_extras(task)}",
    said=lambda task: f"Rescheduled task {task['id']}: {task['title']}{task_extras(task)}",
    example='move one to another day ("Move task 2 to friday")',
    step="Move {task} to {due}",
    on_request=True,
)
async def schedule_todo_task(
    task_id: TaskId, due: Due, user_id: UserId, store: Store
) -> dict[str, Any]:
    """Set or change when a task is due (an empty ``due`` takes its date away)."""
    return await store.schedule(user_id, task_id, due)


@keel_tool(
    mutates=True,
    intent="repeat",
    examples=[
        "make {task} repeat {every}",
        "{task} should repeat {every}",
        "set {task} to repeat {every}",
        "have {task} repeat {every}",
        "repeat {task} {every}",
        "make {task} recurring {every}",
        "change {task} to repeat {every}",
        "stop repeating {task}",
        "{task} doesn't repeat anymore",
        "{task} shouldn't repeat",
        "don't repeat {task} any more",
        "make {task} a one-off",
        "{task} is a one time thing now",
    ],
    reply=lambda task: _repeating(task),
    said=lambda task: _repeating(task),
    example='make one repeat, or stop it ("Make task 2 repeat every monday", "Stop repeating '
    'task 2")',
    step="Change how often {task} repeats",
    on_request=True,
)
async def repeat_todo_task(
    task_id: TaskId, user_id: UserId, store: Store, repeat: Repeat = None
) -> dict[str, Any]:
    """Make a task repeat, or change how often (no ``repeat``, or "never": it stops repeating)."""
    return await store.repeat(user_id, task_id, repeat)


def _repeating(task: dict[str, Any]) -> str:
    """A repeat changed: "Task 3 repeats: call mom (due ...; repeats every sunday)"."""
    said = "repeats" if task.get("repeat") else "no longer repeats"
    return f"Task {task['id']} {said}: {task['title']}{task_extras(task, listed=True)}"


def _again(task: dict[str, Any]) -> str:
    """For a repeating task completed, when it comes back: " (due Mon 7 Dec 2026; repeats ...)"."""
    return task_extras(task, listed=True) if task.get("repeat") and not task["completed"] else ""


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
        r"^{task}(?::| -{1,3}| \u2013)? (?:done|finished|complete|completed|sorted)$",
        r"^(?:cross|tick|check|mark|strike) {task} off(?: (?:my|the) list)?$",
        r"^(?:set|mark|flag) {task} (?:to|as) (?:done|complete|completed|finished)$",
    ],
    told_done=True,
    intent="complete",
    examples=[
        "finish {task}",
        "done with {task}",
        "complete {task}",
        "mark {task} as done",
        "cross {task} off my {list} list",
        "check off {task}",
        "{task} is done",
    ],
    reply=lambda task: f"Completed task: {task['title']}{_again(task)}",
    said=lambda task: f"Completed task {task['id']}: {task['title']}{_again(task)}",
    example='complete one ("Complete 2")',
    step="Mark {task} done",
)
async def complete_todo_task(task_id: TaskId, user_id: UserId, store: Store) -> dict[str, Any]:
    """Mark a task as completed."""
    return await store.complete(user_id, task_id)


@keel_tool(
    mutates=True,
    confirm=Confirm("delete", "deleted"),
    intent="delete",
    examples=[
        "delete {task}",
        "remove task {task}",
        "remove {task} from my {list} list",
        "take {task} off the {list} list",
        "get rid of {task}",
        "i don't need {task} anymore",
    ],
    phrasings=[
        r"^(?:get rid of|forget about|delete off|wipe out|throw out|throw away|clear out|clean out"
        r"|delete|del|remove|drop|erase|trash|bin|nuke|ditch|dump|scrap|scratch|wipe|clear"
        r"|forget|cancel|kill|lose|toss|axe|strike|empty) {task}"
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
    said="Deleted task {id}: {title}",
    example='delete one ("Delete task 2")',
    step="Delete {task}",
)
async def delete_todo_task(task_id: TaskId, user_id: UserId, store: Store) -> dict[str, Any]:
    """Delete a task."""
    return await store.delete(user_id, task_id)
