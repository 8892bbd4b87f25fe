"""Lists and order: a task is on a list, in a place a person sets; a list is cleared at once."""

import uuid

import pytest

from keel.checkpoints.list_fields import TODO_LIST, list_name, read_place
from keel.checkpoints.times import FieldError
from keel.tools.tasks.pages import describe_page
from keel.tools.tasks.store import TaskError, TaskStore
from keel.tools.tasks.todo import TODO_TOOLS
from keel.tools.understanding.reading import understand
from tests.helpers import invoke, open_database


@pytest.fixture
async def store(database_url):
    async with open_database(database_url) as db:
        yield TaskStore(db)


async def titles(store, user="ann", **filters):
    return [t["title"] for t in await store.list(user, **filters)]


@pytest.mark.parametrize(
    ("words", "name"),
    [
        ("shopping", "shopping"),
        ("My Shopping List", "shopping"),
        ("the grocery list", "grocery"),
        ("to-do", TODO_LIST),
        ("my to do list", TODO_LIST),
        ("", TODO_LIST),
        ("list for the bake sale", "bake sale"),
    ],
)
def test_a_list_is_named_as_people_name_it(words, name):
    assert list_name(words) == name


def test_a_list_name_that_cannot_be_kept_is_refused():
    with pytest.raises(FieldError, match="not a list name"):
        list_name("x" * 41)
    with pytest.raises(FieldError, match="not a list name"):
        list_name("?!?")


@pytest.mark.parametrize(
    ("words", "place"),
    [("at the top", 1), ("first", 1), ("urgent", 1), ("to the bottom", -1), ("last", -1),
     ("second", 2), ("3rd", 3), ("4", 4), ("", None)],
)  # fmt: skip
def test_a_place_is_read_from_words(words, place):
    assert read_place(words)["position"] == place


def test_words_that_name_no_place_are_asked_about():
    with pytest.raises(FieldError, match="Where in the list"):
        read_place("somewhere nice")


async def test_a_named_list_comes_into_being_when_a_task_is_put_on_it(store):
    await invoke(store, "ann", "create_todo_task", title="call mom")
    status, task = await invoke(
        store, "ann", "create_todo_task", title="batteries", list="hardware"
    )
    assert status == "success" and task["list"] == "hardware"
    await invoke(store, "ann", "create_todo_task", title="eggs", list="the shopping list")
    assert await titles(store, list_="hardware") == ["batteries"]
    assert await titles(store, list_="todo") == ["call mom"]
    assert await titles(store) == ["call mom", "batteries", "eggs"]  # todo first, then by name
    _, lists = await invoke(store, "ann", "list_todo_lists")
    assert lists["lists"] == [
        {"list": "todo", "tasks": 1, "open": 1},
        {"list": "hardware", "tasks": 1, "open": 1},
        {"list": "shopping", "tasks": 1, "open": 1},
    ]
    _, page = await invoke(store, "ann", "list_todo_tasks", list="Shopping")
    assert describe_page(page) == "Your tasks on the shopping list:\n- [ ] 3. eggs"
    _, everything = await invoke(store, "ann", "list_todo_tasks")
    assert describe_page(everything) == (
        "Your tasks:\nTodo list:\n- [ ] 1. call mom\n\nHardware list:\n- [ ] 2. batteries\n\n"
        "Shopping list:\n- [ ] 3. eggs"
    )


async def test_whether_an_item_is_on_a_list(store):
    await invoke(store, "ann", "create_todo_task", title="tomatoes", list="shopping")
    await invoke(store, "ann", "create_todo_task", title="tomato stakes", list="garden")
    _, found = await invoke(
        store, "ann", "find_todo_tasks", descriptions=["tomatoes"], list="shopping"
    )
    assert [t["title"] for t in found["found"][0]["tasks"]] == ["tomatoes"]
    _, none = await invoke(store, "ann", "find_todo_tasks", descriptions=["bread"], list="shopping")
    assert none["found"][0]["tasks"] == []


async def test_the_order_a_person_sets_holds(store):
    for title in ("a", "b", "c"):
        await invoke(store, "ann", "create_todo_task", title=title)
    _, top = await invoke(store, "ann", "create_todo_task", title="renew passport", place="top")
    assert await titles(store) == ["renew passport", "a", "b", "c"]
    await invoke(store, "ann", "move_todo_task", task_id=1, place="bottom")
    assert await titles(store) == ["renew passport", "b", "c", "a"]
    _, moved = await invoke(store, "ann", "move_todo_task", task_id=1, place="second")
    assert await titles(store) == ["renew passport", "a", "b", "c"]
    assert (moved["place"], moved["of"]) == (2, 4)
    await invoke(store, "ann", "create_todo_task", title="d", place="3")
    assert await titles(store) == ["renew passport", "a", "d", "b", "c"]
    status, error = await invoke(store, "ann", "move_todo_task", task_id=top["id"])
    assert status == "error" and "Say where to move it" in error


async def test_a_task_moves_to_another_list_and_goes_to_its_bottom(store):
    await invoke(store, "ann", "create_todo_task", title="eggs")
    await invoke(store, "ann", "create_todo_task", title="milk", list="shopping")
    status, moved = await invoke(store, "ann", "move_todo_task", task_id=1, list="shopping")
    assert status == "success" and moved["list"] == "shopping"
    assert await titles(store, list_="shopping") == ["milk", "eggs"]
    await invoke(store, "ann", "move_todo_task", task_id=1, list="todo", place="top")
    assert await titles(store, list_="todo") == ["eggs"]


async def test_clearing_a_list_deletes_only_it_and_only_the_users(store):
    await invoke(store, "ann", "create_todo_task", title="call mom")
    await invoke(store, "ann", "create_todo_task", title="eggs", list="shopping")
    await invoke(store, "ann", "create_todo_task", title="milk", list="shopping")
    await invoke(store, "bob", "create_todo_task", title="bread", list="shopping")
    status, done = await invoke(store, "ann", "clear_todo_list", list="my shopping list")
    assert status == "success" and done == {"list": "shopping", "deleted": 2}
    assert await titles(store) == ["call mom"]
    assert await titles(store, user="bob") == ["bread"]
    _, todo = await invoke(store, "ann", "clear_todo_list")
    assert todo == {"list": "todo", "deleted": 1}


async def test_another_users_task_cannot_be_moved(store):
    await invoke(store, "ann", "create_todo_task", title="eggs")
    status, error = await invoke(store, "bob", "move_todo_task", task_id=1, list="shopping")
    assert status == "error" and error == "Error: Task 1 not found."
    with pytest.raises(TaskError, match="not a list name"):
        await store.list("ann", list_="x" * 80)


async def test_clearing_a_list_asks_once_naming_it_and_its_tasks(memory_keel):
    for title in ("eggs", "milk", "bread"):
        await memory_keel.store.create("local", title, list="shopping")
    await memory_keel.store.create("local", "call mom")
    cid = str(uuid.uuid4())
    asked = await memory_keel.say(cid, "clear my shopping list")
    assert asked.reply == (
        "Are you sure you want to clear the shopping list? (yes/no)\n"
        "Clear the shopping list - 3 tasks"
    )
    done = await memory_keel.say(cid, "yes")
    assert done.reply == "Cleared the shopping list: 3 tasks deleted."
    assert [t["title"] for t in await memory_keel.store.list("local")] == ["call mom"]
    empty = await memory_keel.say(cid, "empty the shopping list")
    assert empty.reply == "There is nothing on the shopping list to clear."


async def test_a_task_named_by_its_place_is_counted_in_the_list_shown_last(memory_keel):
    for title, on in (("call mom", None), ("eggs", "shopping"), ("milk", "shopping")):
        await memory_keel.store.create("local", title, list=on)
    cid = str(uuid.uuid4())
    shown = await memory_keel.say(cid, "what's on my shopping list?")
    assert shown.reply == "Your tasks on the shopping list:\n- [ ] 2. eggs\n- [ ] 3. milk"
    done = await memory_keel.say(cid, "cross off the second one")
    assert done.reply == "Completed task: milk"
    asked = await memory_keel.say(cid, "delete the last one listed")
    assert asked.awaiting_confirmation["task_ids"] == [3]
    await memory_keel.say(cid, "no")
    none = await memory_keel.say(cid, "complete the fifth one")
    assert "There is no 5th task in the list: it has 2." in none.reply


async def test_a_move_says_where_the_task_went(memory_keel):
    for title in ("call mom", "renew passport", "pay rent"):
        await memory_keel.store.create("local", title)
    await memory_keel.store.create("local", "milk", list="shopping")
    cid = str(uuid.uuid4())
    top = await memory_keel.say(cid, "move renew passport to the top")
    assert top.reply == "Moved task 2: renew passport, now at the top of the todo list"
    second = await memory_keel.say(cid, "move pay rent to second place")
    assert second.reply == "Moved task 3: pay rent, now 2nd of 3 on the todo list"
    moved = await memory_keel.say(cid, "move call mom to the shopping list")
    assert moved.reply == "Moved task 1: call mom, now at the bottom of the shopping list"


async def test_a_place_with_no_list_shown_counts_in_the_whole_list(memory_keel):
    for title in ("a", "b", "c"):
        await memory_keel.store.create("local", title)
    await memory_keel.store.create("local", "urgent thing", place="top")
    done = await memory_keel.say(str(uuid.uuid4()), "mark the first one as done")
    assert done.reply == "Completed task: urgent thing"


@pytest.mark.parametrize(
    ("message", "made"),
    [
        (
            "I need to get groceries: eggs, spinach and rice",
            [("eggs", None, None), ("spinach", None, None), ("rice", None, None)],
        ),
        (
            "add eggs, milk and rice to the costco list for saturday",
            [("eggs", "costco", "for saturday"), ("milk", "costco", "for saturday"),
             ("rice", "costco", "for saturday")],
        ),
        ("add batteries to the hardware list", [("batteries", "hardware", None)]),
    ],
)  # fmt: skip
def test_the_items_of_one_request_share_its_list_and_date(message, made):
    read = understand(message, TODO_TOOLS).intents
    assert [(i.args["title"], i.args.get("list"), i.args.get("due")) for i in read] == made


@pytest.mark.parametrize(
    ("message", "tool", "args"),
    [
        ("clear my shopping list", "clear_todo_list", {"list": "shopping"}),
        ("which lists do i have?", "list_todo_lists", {}),
        ("is bread on the shopping list?", "find_todo_tasks",
         {"descriptions": "bread", "list": "shopping"}),
        ("what's on the grocery list", "list_todo_tasks", {"list": "grocery"}),
        ("put 'renew passport' at the top, it's urgent", "create_todo_task",
         {"title": "renew passport", "place": "at the top"}),
        ("move eggs to the shopping list", "move_todo_task", {"list": "shopping"}),
    ],
)  # fmt: skip
def test_lists_and_places_are_understood_offline(message, tool, args):
    (read,) = understand(message, TODO_TOOLS).intents
    assert (read.tool, read.args) == (tool, args)
