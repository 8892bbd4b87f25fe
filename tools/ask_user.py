"""The question tool: how the model asks the user for something the plan cannot go on without.

A question is pending only when the model asked it with ``ask_user`` (a missing detail, a choice
between tasks), never because a reply happens to end in "?": chat models close with "How can I
help?" all the time, and the next request must stay a request. The tool is bound beside the todo
tools and handled by the assistant node: the call never reaches a store; its question becomes the
turn's reply and ``pending_question``, and the next message is its answer (``keel.nodes.mission``).
"""

from __future__ import annotations

from keel.tools.spec import keel_tool


@keel_tool(
    prompt="Need a detail or a choice from the user: call ask_user (a question in your text "
    "gets no answer).",
)
async def ask_user(question: str) -> str:
    """Ask the user a question whose answer you need to carry out the request.

    Only for a missing detail or a choice you cannot make yourself; the user's answer comes back
    as their next message.
    """
    return question  # handled by the assistant node: it becomes the reply


ASK_TOOL = ask_user.name


def question_of(args: dict[str, object]) -> str:
    """The question an ``ask_user`` call asks, stripped ("" when it asks none)."""
    return str(args.get("question") or "").strip()
