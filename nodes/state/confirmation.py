"""A destructive action waiting for the user's yes or no: the question as asked, and what it holds.

``Confirmation`` is what every client is shown (``awaiting_confirmation`` in a turn's result: the
question, and each change named in full); ``ConfirmationRequest`` is what the graph's state keeps
to carry out the answer (the tool calls it decides, how often it was asked).
"""

from __future__ import annotations

from typing import Annotated, Any, NotRequired

from pydantic import Field
from typing_extensions import TypedDict


class ConfirmationChange(TypedDict):
    """One change a confirmation asks about, named in full for the user."""

    action: Annotated[str, Field(description="delete or rename.", examples=["rename"])]
    task_id: Annotated[Any, Field(description="The task's number.", examples=[1])]
    title: Annotated[str | None, Field(description="The task's title now.", examples=["buy milk"])]
    new_title: Annotated[
        str | None,
        Field(
            description="The title a rename gives it (null for a delete).",
            examples=["buy oat milk"],
        ),
    ]
    text: Annotated[
        str,
        Field(
            description="The change in words, ready to show.",
            examples=["Rename task 1: buy milk -> buy oat milk"],
        ),
    ]


class Confirmation(TypedDict):
    """A destructive action waiting for the user's yes or no, as the user is asked it."""

    action: Annotated[
        str, Field(description="What will be done: delete or rename.", examples=["delete"])
    ]
    task_id: Annotated[Any, Field(description="The task it will be done to.", examples=[3])]
    task_ids: Annotated[
        list[Any],
        Field(
            description="Every task the question covers (one question for a request that "
            "deletes or renames several).",
            examples=[[3]],
        ),
    ]
    prompt: Annotated[
        str,
        Field(
            description="The question put to the user (also the turn's reply).",
            examples=["Are you sure you want to delete task 3? (yes/no)"],
        ),
    ]
    changes: Annotated[
        list[ConfirmationChange],
        Field(
            description="What a yes will change, one entry a task, in the order asked.",
            examples=[
                [
                    {
                        "action": "delete",
                        "task_id": 3,
                        "title": "book dentist",
                        "new_title": None,
                        "text": "Delete task 3 - book dentist",
                    }
                ]
            ],
        ),
    ]


class ConfirmationRequest(Confirmation):
    """A destructive tool call waiting for the user's yes or no."""

    tool_call_id: str | None
    """The first tool call that waits."""
    tool_call_ids: list[str]
    """Every tool call the answer decides."""
    asked: int
    """How many times the question was put (an unclear answer puts it again)."""
    missing: dict[str, str]
    """Calls left out of the question, their task not there: the error each one answers."""
    titles: NotRequired[dict[str, str]]
    """The title of each asked call's task when it was asked (by tool call id)."""
