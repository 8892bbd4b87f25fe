"""Making the learned understanding: the shipped model is what its data makes, and a new tool is
learned from its declaration alone."""

from typing import Annotated, Any

from langchain_core.tools import InjectedToolArg

import keel.tools.understanding.nlu as nlu
from keel.tools.spec import keel_tool
from keel.tools.tasks.store import TaskStore
from keel.tools.tasks.todo import TODO_TOOLS
from keel.tools.understanding.nlu import SHIPPED, Reader, reader_for
from keel.tools.understanding.nlu.data import fingerprint, labelled
from keel.tools.understanding.nlu.training import train


def test_the_shipped_model_is_made_for_the_todo_tools():
    assert Reader(SHIPPED).fingerprint == fingerprint(TODO_TOOLS)


def test_rebuilding_gives_the_shipped_models_predictions(tmp_path):
    fresh, shipped = Reader(train(TODO_TOOLS, tmp_path / "model")), Reader(SHIPPED)
    texts = [s.text for s in labelled(TODO_TOOLS) if s.heldout][::5]
    assert len(texts) > 500
    for text in texts:
        a, b = fresh.read(text), shipped.read(text)
        assert (a.label, a.args) == (b.label, b.args), text
        assert abs(a.confidence - b.confidence) < 1e-3, text


@keel_tool(
    mutates=True,
    examples=[
        "snooze {task}",
        "postpone {task}",
        "put off {task}",
        "push {task} back",
        "delay {task}",
        "defer {task}",
        "move {task} to later",
        "do {task} later",
        "bump {task} to tomorrow",
        "remind me about {task} later",
    ],
    reply="Snoozed task {id}: {title}",
    example='snooze one ("Snooze task 2")',
)
async def snooze_todo_task(
    task_id: int,
    user_id: Annotated[str, InjectedToolArg],
    store: Annotated[TaskStore, InjectedToolArg],
) -> dict[str, Any]:
    """Put a task off until later."""
    return await store.get(user_id, task_id)


UNSEEN = [
    "could you postpone task 3",
    "snooze the milk one please",
    "push back 4",
    "i want to defer the dentist",
    "delay number 2 please",
    "can we put off the report",
    "let's do the laundry later",
    "postpone #5",
    "please snooze 7",
    "move the gym one to later please",
    "push the plumber back a bit",
    "i'll do the taxes later",
]


def test_a_new_tool_is_learned_from_its_declaration(tmp_path, monkeypatch):
    monkeypatch.setattr(nlu, "CACHE", tmp_path)
    tools = [*TODO_TOOLS, snooze_todo_task]
    reader = reader_for(tools)
    assert list(tmp_path.iterdir()), "a model was trained for the new tool list"
    readings = {text: reader.read(text) for text in UNSEEN}
    understood = [t for t, r in readings.items() if r.label == snooze_todo_task.name]
    rate = len(understood) / len(UNSEEN)
    print(f"unseen phrasings of a new tool understood: {len(understood)}/{len(UNSEEN)}")  # noqa: T201
    assert rate >= 0.75, {t: (r.label, r.confidence) for t, r in readings.items()}
    assert readings["postpone #5"].args.get("ref") == "5"
    assert reader.read("add buy milk").label == "create_todo_task"
