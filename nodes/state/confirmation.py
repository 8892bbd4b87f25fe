"""A destructive action waiting for the user's yes or no: the question as asked, and what it holds.

``ApprovalRequest`` is the value of the interrupt the graph waits on (LangChain's human-in-the-loop
request shape, with the question in words); ``Confirmation`` is what keel's clients are shown of
it (``awaiting_confirmation`` in a turn's result: the question, and each change named in full).
"""

from __future__ import annotations

from typing import Annotated, Any

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
            examples=[
                "Are you sure you want to delete task 3? (yes/no)\nDelete task 3 - book dentist"
            ],
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


class ActionRequest(TypedDict):
    """One tool call waiting for approval, as LangChain's human-in-the-loop requests name it."""

    name: str
    """The tool."""
    args: dict[str, Any]
    """Its arguments."""
    description: str
    """The change in words ("Delete task 1 - buy milk")."""
    change: ConfirmationChange
    """The change in full."""


class ReviewConfig(TypedDict):
    """What the user may answer to one tool's calls."""

    action_name: str
    allowed_decisions: list[str]


class ApprovalRequest(TypedDict):
    """The value of the interrupt a destructive request waits on: LangChain's human-in-the-loop
    request (``action_requests`` and ``review_configs``, which Agent Chat UI shows with Approve and
    Reject buttons) with the question in words, as keel's own clients ask it.

    It is answered by ``Command(resume=...)`` with ``{"decisions": [{"type": "approve"}, ...]}``
    (one decision for every call, or one for all) or with the answer's text ("yes"), or by the next
    message.
    """  # noqa: D205

    action_requests: list[ActionRequest]
    review_configs: list[ReviewConfig]
    question: str
    """The question put to the user, each change named on a line after it ("Are you sure you want
    to delete task 3? (yes/no)", then "Delete task 3 - book dentist").
    """


def approval_request(
    changes: list[tuple[str, dict[str, Any], ConfirmationChange]], question: str
) -> ApprovalRequest:
    """The request for ``changes`` (each a tool, its arguments, the change), asked ``question``."""
    return {
        "action_requests": [
            {"name": name, "args": args, "description": change["text"], "change": change}
            for name, args, change in changes
        ],
        "review_configs": [
            {"action_name": name, "allowed_decisions": ["approve", "reject"]}
            for name in dict.fromkeys(name for name, _, _ in changes)
        ],
        "question": question,
    }


def confirmation_of(request: ApprovalRequest) -> Confirmation:
    """What keel's clients are shown of ``request`` (``awaiting_confirmation``)."""
    changes = [a["change"] for a in request["action_requests"]]
    return {
        "action": changes[0]["action"],
        "task_id": changes[0]["task_id"],
        "task_ids": [c["task_id"] for c in changes],
        "prompt": request["question"],
        "changes": changes,
    }


def is_approval_request(value: Any) -> bool:
    """``value`` is an interrupt's ``ApprovalRequest``."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("action_requests"), list)
        and bool(value["action_requests"])
        and isinstance(value.get("question"), str)
    )
