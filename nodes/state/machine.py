"""The four states of a turn and the one table of valid transitions between them.

``AgentState`` values are the strings persisted in checkpoints and the names of the graph's state
nodes. ``TRANSITIONS`` is read by the graph builder (the path maps of the conditional edges) and by
``validate_transition``, which every state node calls before it records its state.
"""

from __future__ import annotations

from collections.abc import Hashable
from enum import StrEnum
from typing import Final

from langgraph.graph import END


class AgentState(StrEnum):
    """Where a turn is: the value is both the persisted string and the node's name."""

    USER_INPUT = "user_input"
    """A user message arrived; the turn is being prepared (topic, reset, plan)."""
    ASSISTANT = "assistant"
    """The chat model decides: answer, or call tools."""
    TOOL_EXECUTION = "tool_execution"
    """Tool calls run (destructive ones only after a yes)."""
    RESPONSE = "response"
    """The completion decision: end the turn, or loop back to the assistant."""


Target = AgentState | str
"""A transition target: a state, or ``END`` (the turn is over)."""

TRANSITIONS: Final[dict[AgentState, tuple[Target, ...]]] = {
    AgentState.USER_INPUT: (AgentState.ASSISTANT,),
    AgentState.ASSISTANT: (AgentState.TOOL_EXECUTION, AgentState.RESPONSE),
    AgentState.TOOL_EXECUTION: (AgentState.RESPONSE,),
    AgentState.RESPONSE: (AgentState.ASSISTANT, END),
}


class InvalidTransition(ValueError):
    """A node tried to move the state machine along an edge the table does not have."""

    def __init__(self, src: AgentState, dst: Target) -> None:
        """Name both ends of the refused transition."""
        self.src = src
        self.dst = dst
        allowed = ", ".join(str(t) for t in TRANSITIONS[src])
        super().__init__(f"invalid transition {src} -> {dst} (allowed from {src}: {allowed})")


def validate_transition(src: AgentState, dst: Target) -> bool:
    """Check ``src -> dst`` against the table.

    Returns:
        True when the state changes, False for a self-transition (a no-op).

    Raises:
        InvalidTransition: the table has no such edge.
    """
    if src == dst:
        return False
    if dst not in TRANSITIONS[src]:
        raise InvalidTransition(src, dst)
    return True


def path_map(src: AgentState) -> dict[Hashable, str]:
    """The conditional-edge path map out of ``src``: every target names its node (or END)."""
    return {dst: str(dst) for dst in TRANSITIONS[src]}
