"""A developer's tool, declared the way keel's own are: the todo tools and ``set_task_room``.

Handed to keel as ``--tools tests.extra_tools:TOOLS`` (``KEEL_TOOLS``) or ``create_app(tools=...)``.
It stores a new attribute on tasks, a room: its migration adds the column (``add_room_column``),
the store keeps and reads it (``TaskStore.set_attributes``), and the API's tasks carry it.
"""

from typing import Annotated, Any

import sqlalchemy as sa
from langchain_core.tools import InjectedToolArg

from keel.checkpoints.migrate import migration_engine, upgrade
from keel.checkpoints.urls import parse_database_url
from keel.tools.ask_user import ask_user
from keel.tools.confirm import Confirm
from keel.tools.spec import keel_tool
from keel.tools.tasks.store import TaskStore
from keel.tools.tasks.todo import TODO_TOOLS


@keel_tool(
    mutates=True,
    confirm=Confirm("move", "moved"),
    phrasings=[r"^(?:set|change) the room of {task} to (?P<room>.+)$"],
    reply="Task {id} is now in {room}: {title}",
    prompt="set_task_room takes the room in the user's own words.",
    example='set a room ("Set the room of task 2 to the office")',
)
async def set_task_room(
    task_id: int,
    room: str,
    user_id: Annotated[str, InjectedToolArg],
    store: Annotated[TaskStore, InjectedToolArg],
) -> dict[str, Any]:
    """Set the room a task is done in (as the user says it)."""
    return await store.set_attributes(user_id, task_id, room=room)


async def add_room_column(database_url: str) -> None:
    """The room's migration: keel's tables made, then the column added beside them."""
    engine = migration_engine(parse_database_url(database_url))
    try:
        await upgrade(engine)
        with engine.begin() as connection:
            connection.execute(sa.text("ALTER TABLE keel_tasks ADD COLUMN room VARCHAR(100)"))
    finally:
        engine.dispose()


TOOLS = [*TODO_TOOLS, set_task_room]


def tools_of() -> list:
    """The same tools from a function (``--tools tests.extra_tools:tools_of``)."""
    return TOOLS


CLASHING = [*TODO_TOOLS, ask_user]
DOUBLED = [*TOOLS, set_task_room]
NONE: list = []
