import pytest

from keel.tools.tasks.todo import TODO_TOOLS
from keel.tools.understanding.reading import confirms, parse_intents

ROWS = [
    ("Add buy milk", "create_todo_task", None, {"title": "buy milk"}),
    ("Remind me to call mom", "create_todo_task", None, {"title": "call mom"}),
    ("Show task 3", "get_todo_task", "3", {}),
    ("Details for 2", "get_todo_task", "2", {}),
    ("What's on my list?", "list_todo_tasks", None, {}),
    ("Show all", "list_todo_tasks", None, {}),
    ("Rename task 2 to walk the dog", "update_todo_task", "2", {"title": "walk the dog"}),
    ("Finish 1", "complete_todo_task", "1", {}),
    ("Done with 2", "complete_todo_task", "2", {}),
    ("Complete 3", "complete_todo_task", "3", {}),
    ("Delete 4", "delete_todo_task", "4", {}),
    ("Remove task 5", "delete_todo_task", "5", {}),
    ("complete buy milk", "complete_todo_task", "buy milk", {}),
    ("delete the dentist appointment", "delete_todo_task", "dentist appointment", {}),
]


@pytest.mark.parametrize("text,tool,ref,args", ROWS)
def test_decision_table_rows(text, tool, ref, args):
    [intent] = parse_intents(text, TODO_TOOLS)
    assert (intent.tool, intent.ref, intent.args) == (tool, ref, args)


def test_several_requests_in_one_message_keep_their_order():
    intents = parse_intents("add eggs, then delete task 2 and show all", TODO_TOOLS)
    assert [i.tool for i in intents] == ["create_todo_task", "delete_todo_task", "list_todo_tasks"]


def test_a_piece_that_is_no_request_stays_in_the_title():
    [intent] = parse_intents("Add bread and butter", TODO_TOOLS)
    assert intent.args == {"title": "bread and butter"}


def test_unknown_text_has_no_intent():
    assert parse_intents("what's the weather like?", TODO_TOOLS) == []
    assert parse_intents("", TODO_TOOLS) == []


@pytest.mark.parametrize(
    "text,expected",
    [
        ("delete task 3, yes I'm sure", True),
        ("delete task 3, yes", True),
        ("delete task 3, confirm", True),
        ("Delete task 3", False),
        ("add yesterday's notes", False),
    ],
)
def test_same_message_confirmation(text, expected):
    assert confirms(text) is expected


def test_confirmation_is_not_parsed_as_a_request():
    [intent] = parse_intents("delete task 3, yes I'm sure", TODO_TOOLS)
    assert intent.tool == "delete_todo_task" and intent.task_id == 3


@pytest.mark.parametrize(
    "text,ref,args",
    [
        ("Delete buy milk, it was a typo", "buy milk", {}),
        ("Delete task 1, it was a typo", "1", {}),
        ("Complete task 2, that's done", "2", {}),
        ("Delete the milk one, they're duplicates", "milk", {}),
        ("Add buy milk, it's urgent", None, {"title": "buy milk", "place": "urgent"}),  # read
    ],
)
def test_a_word_on_why_after_a_request_is_no_task_of_it(text, ref, args):
    [intent] = parse_intents(text, TODO_TOOLS)
    assert (intent.ref, intent.args) == (ref, args)


@pytest.mark.parametrize(
    "text,ref",
    [
        ("scratch the rice, we still have some", "rice"),
        ("delete the milk, we have plenty", "milk"),
    ],
)
def test_a_remark_after_a_request_is_no_item_of_it(text, ref):
    [intent] = parse_intents(text, TODO_TOOLS)
    assert (intent.tool, intent.ref) == ("delete_todo_task", ref)


def test_a_request_after_a_request_is_still_one():
    first, second = parse_intents("delete eggs, I need to call mom", TODO_TOOLS)
    assert (first.tool, first.ref) == ("delete_todo_task", "eggs")
    assert (second.tool, second.args) == ("create_todo_task", {"title": "call mom"})
    call, rent = parse_intents("add call mom, we have to pay rent", TODO_TOOLS)
    assert (call.args, rent.args) == ({"title": "call mom"}, {"title": "pay rent"})


def test_an_aside_inside_a_list_leaves_the_items_around_it():
    intents = parse_intents("add eggs, we're out, milk", TODO_TOOLS)
    assert [i.args["title"] for i in intents] == ["eggs", "milk"]
    assert all(i.text.endswith(", we're out") for i in intents)


def test_a_word_on_a_task_alone_is_still_a_request():
    [intent] = parse_intents("That's done", TODO_TOOLS)
    assert intent.tool == "complete_todo_task" and intent.refers_back
