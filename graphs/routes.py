"""The graph's routers: which way a turn goes after each node, read from the state alone.

Each returns a ``Literal`` (or the state machine's enum) that ``keel.graphs.builder`` maps to a
node with an explicit path map, so Studio's drawing is exact and the routes are checked against
the transition table (``keel.nodes.state.machine``). Those ending in ``_handing_over`` and
``route_turn`` serve the graph a LangGraph server runs (``keel.graphs.builder.served``).
"""

from __future__ import annotations

from typing import Annotated, Literal, cast

from langchain_core.messages import AIMessage, AnyMessage
from langgraph.graph import END
from langgraph.runtime import get_runtime
from typing_extensions import TypedDict

from keel.graphs.resources import prepared
from keel.nodes.mission import has_reset_work
from keel.nodes.resume import context_exhausted
from keel.nodes.run_context import KeelContext
from keel.nodes.state.commands import BadCommand
from keel.nodes.state.machine import AgentState, Target, validate_transition
from keel.nodes.state.reducers import bounded_window
from keel.nodes.state.schema import CommandName, HistoryEntry, KeelState, Todolist
from keel.nodes.support.waiting import calls_to_run, ran_after_a_yes

# The routers are coroutine functions: LangGraph runs a plain function in a worker thread when the
# graph runs asynchronously, and for the microseconds these take the hop costs more than the work.
# Each declares the state keys it reads (its parameter's type): LangGraph reads only those for it.


class InputView(TypedDict, total=False):
    """What tells what the input was: a command, the answer to a confirmation, or a message."""

    command: CommandName | None
    window: Annotated[list[AnyMessage], bounded_window]
    agent_state: str


class WindowView(TypedDict, total=False):
    """The turn's messages."""

    window: Annotated[list[AnyMessage], bounded_window]


class ModelInputView(TypedDict, total=False):
    """What the next model input is made of (``model_input``), and whether the turn is over."""

    window: Annotated[list[AnyMessage], bounded_window]
    history: list[HistoryEntry]
    answers: dict[str, str]
    topic_changed: bool
    nudges: int
    todolist: Todolist | None
    context_exhausted: bool
    turn_over: bool


class ResetWorkView(TypedDict, total=False):
    """What tells whether the reset node has something to do."""

    pending_question: str | None
    todolist: Todolist | None


async def route_reset(state: ResetWorkView) -> Literal["reset", "plan"]:
    """After topic_detect: through reset when a plan or a question is in place, else to plan."""
    return "reset" if has_reset_work(cast(KeelState, state)) else "plan"


class PlanView(ModelInputView, total=False):
    """What tells whether the plan node has something to do, and what comes after it."""

    mission: str | None


async def route_plan(state: PlanView) -> Literal["plan", "resume", AgentState.ASSISTANT]:
    """After reset: plan when the mission or its todolist is gone (a plan ended), else go on
    with the one in place (a question was answered) as after plan.
    """  # noqa: D205
    if state.get("mission") is None or state.get("todolist") is None:
        return "plan"
    return await route_context(state)


InputRoute = Literal[
    "reset_conversation",
    "reopen_topic",
    "remind",
    "topic_detect",
    AgentState.TOOL_EXECUTION,
    AgentState.RESPONSE,
]


async def route_input(state: InputView) -> InputRoute:
    """After user_input: a command to its node, an answer to the waiting tool calls (the window
    still ends with them: user_input opened no new one), the response after calls decided in the
    served graph's run before, else a turn.
    """  # noqa: D205
    command = state.get("command")
    if command == "reset":
        return "reset_conversation"
    if command == "reopen":
        return "reopen_topic"
    if command == "remind":
        return "remind"
    if command is not None:
        raise BadCommand(f"no node carries out the command {command!r}")
    window = state.get("window") or []
    answered = bool(window) and isinstance(window[-1], AIMessage) and bool(window[-1].tool_calls)
    if answered:
        return AgentState.TOOL_EXECUTION
    context = await prepared(get_runtime(KeelContext).context)
    if ran_after_a_yes(cast(KeelState, state), context.resources.tools):
        return AgentState.RESPONSE
    return "topic_detect"


async def route_assistant(
    state: WindowView,
) -> Literal[AgentState.TOOL_EXECUTION, AgentState.RESPONSE]:
    """After the assistant: run tools when it asked for any, else decide in RESPONSE."""
    last = state["window"][-1]
    if isinstance(last, AIMessage) and last.tool_calls:
        return AgentState.TOOL_EXECUTION
    return AgentState.RESPONSE


async def route_assistant_handing_over(
    state: WindowView,
) -> Literal[AgentState.RESPONSE, "__end__"]:
    """As ``route_assistant``, but the model's tool calls end the turn graph first: the graph
    around it (``served``) checkpoints them before any runs, and runs the turn graph again to
    carry them out (or to ask about them).
    """  # noqa: D205
    target = await route_assistant(state)
    if target is AgentState.TOOL_EXECUTION:
        return "__end__"  # END
    return target


class DecidedView(WindowView, total=False):
    """What tells whether the turn's calls were decided: the window and where the turn is."""

    agent_state: str
    turn_over: bool


async def route_tools(
    state: WindowView,
) -> Literal[AgentState.TOOL_EXECUTION, AgentState.RESPONSE]:
    """After tool_execution: back to it while its calls still wait (a question was just put, to
    be checkpointed before the graph waits on it), else on to the response.
    """  # noqa: D205
    if calls_to_run(cast(KeelState, state)) is not None:
        return AgentState.TOOL_EXECUTION
    return AgentState.RESPONSE


async def route_tools_handing_over(
    state: DecidedView,
) -> Literal[AgentState.RESPONSE, "__end__"]:
    """After tool_execution in the served turn graph: a question just put, and calls that needed
    a yes, end the turn graph first, so the graph around it saves the question, or the answer and
    the results, in a checkpoint of its own (it waits on the question from there; a reply
    regenerated from there runs the response again, never the question); then it goes on.
    """  # noqa: D205
    if calls_to_run(cast(KeelState, state)) is not None:
        return "__end__"  # END: the question put, waited on in the next run
    context = await prepared(get_runtime(KeelContext).context)
    if ran_after_a_yes(cast(KeelState, state), context.resources.tools):
        return "__end__"  # END
    return AgentState.RESPONSE


async def route_context(state: ModelInputView) -> Literal["resume", AgentState.ASSISTANT]:
    """Before the assistant: open a fresh window first when the old one is exhausted."""
    context = await prepared(get_runtime(KeelContext).context)
    exhausted = context_exhausted(cast(KeelState, state), context)
    return "resume" if exhausted else AgentState.ASSISTANT


async def route_response(state: ModelInputView) -> Target:
    """After the response node: END when the turn is over, else on to the assistant.

    The way to the assistant passes through resume when the context is exhausted; as a state
    transition it is RESPONSE -> ASSISTANT either way.
    """
    if state.get("turn_over"):
        validate_transition(AgentState.RESPONSE, END)
        return END
    validate_transition(AgentState.RESPONSE, AgentState.ASSISTANT)
    return await route_context(state)


async def route_turn(state: DecidedView) -> Literal["turn", "__end__"]:
    """After a run of the turn graph: run it again when it ended on the model's calls (to carry
    them out, or ask first) or on calls a yes decided (to go on), else the turn is over.
    """  # noqa: D205
    if state.get("turn_over"):  # ended: by its response, a command, or from outside a run
        return "__end__"  # END
    if calls_to_run(cast(KeelState, state)) is not None:
        return "turn"
    if state.get("agent_state") != AgentState.TOOL_EXECUTION:  # no calls were just decided
        return "__end__"  # END (an update written from outside a run ends here too)
    context = await prepared(get_runtime(KeelContext).context)
    again = ran_after_a_yes(cast(KeelState, state), context.resources.tools)
    return "turn" if again else "__end__"  # END
