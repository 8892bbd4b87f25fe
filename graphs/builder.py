"""The graph builder: the one place that knows how keel's nodes are wired.

``build_graph(checkpointer=None, store=None)`` returns the compiled graph of one turn::

    START -> user_input -> topic_detect -> [reset] -> [plan] -> [resume] -> assistant
    user_input -> tool_execution  (the message answers a waiting confirmation)
    user_input -> reset_conversation | reopen_topic -> END  (the input is a command)
    assistant -> tool_execution | response
    tool_execution -> response  (a confirmation is waited for inside it, with ``interrupt``)
    response -> assistant | END

Every node is wrapped so that its ``runtime.context`` is the caller's ``KeelContext`` with the
process's resources (``keel.graphs.resources.prepared``); the state nodes' wrappers also check the
transition table and record the new ``agent_state``, and every wrapper adds what its node adds to
the window (the assistant's messages, the tool results) to ``messages``, the conversation as
LangGraph's clients show it (``keel.nodes.support.message_log.with_conversation``). The conditional
edges take their path maps from the same table. Only the assistant's text reaches the
``messages`` stream: the other nodes write the window, and everything ``messages``, as
``unstreamed`` updates.

``graph`` is the module-level graph a LangGraph server (``langgraph dev``, Studio) loads through
``langgraph.json``; it has no checkpointer of its own (the server brings one).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Hashable
from typing import Annotated, Any, Literal, cast

import structlog
from langchain_core.messages import AIMessage, AnyMessage, RemoveMessage, ToolMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime, get_runtime
from langgraph.store.base import BaseStore
from typing_extensions import TypedDict

from keel.graphs.resources import prepared
from keel.nodes.assistant import assistant
from keel.nodes.mission import has_reset_work, reset
from keel.nodes.plan import plan
from keel.nodes.reopen_topic import reopen_topic
from keel.nodes.reset_conversation import reset_conversation
from keel.nodes.response import response
from keel.nodes.resume import context_exhausted, resume
from keel.nodes.run_context import KeelContext, conversation_id
from keel.nodes.state.commands import BadCommand
from keel.nodes.state.machine import AgentState, Target, path_map, validate_transition
from keel.nodes.state.schema import (
    CommandName,
    HistoryEntry,
    KeelState,
    Todolist,
    TurnInput,
    TurnOutput,
    bounded_window,
    unstreamed,
)
from keel.nodes.support.confirming import ran_after_a_yes, waiting_calls
from keel.nodes.support.in_flight import noted
from keel.nodes.support.message_log import with_conversation
from keel.nodes.tool_execution import tool_execution
from keel.nodes.topic import topic_detect
from keel.nodes.user_input import user_input
from keel.tools.crash_points import pause_point

log = structlog.get_logger(__name__)

NodeFn = Callable[[KeelState, Runtime[KeelContext]], Any] | Callable[[KeelState], Any]


def current_state(state: KeelState) -> AgentState:
    """The state machine's position as an AgentState (USER_INPUT for a new conversation)."""
    return AgentState(state.get("agent_state") or AgentState.USER_INPUT)


def node(fn: NodeFn, enters: AgentState | None = None) -> Callable[..., Awaitable[Any]]:
    """``fn`` as a node on a prepared context; with ``enters``, running it is that transition."""
    name = str(enters) if enters else fn.__name__
    wants_runtime = len(inspect.signature(fn).parameters) > 1

    async def run_node(state: KeelState, runtime: Runtime[KeelContext]) -> dict[str, Any]:
        context = await prepared(runtime.context)
        if context is not runtime.context:
            runtime = runtime.override(context=context)
        if context.note is None:  # keel's runner took the turn lock, the owner checked with it
            await context.resources.conversations.claim(conversation_id(runtime), context.user_id)
        source = current_state(state)
        if enters is not None:
            validate_transition(source, enters)  # staying (a resumed wait) is no transition
            if enters is AgentState.TOOL_EXECUTION:  # no tool acts before the turn is noted
                await noted(runtime)
            pause_point(f"before:{enters}", context.resources.pause_at)
        args = (state, runtime) if wants_runtime else (state,)
        update = fn(*args)
        if inspect.isawaitable(update):
            update = await update
        if enters is not None:
            log.debug("transition", src=str(source), dst=str(enters))
            update = {**update, "agent_state": enters.value}
        return with_conversation(update)

    run_node.__name__ = run_node.__qualname__ = name
    return run_node


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
    "topic_detect",
    AgentState.TOOL_EXECUTION,
    AgentState.RESPONSE,
]


async def route_input(state: InputView) -> InputRoute:
    """After user_input: a command to its node, an answer to the waiting tool calls (the window
    still ends with them: user_input opened no new one), else a turn.
    """  # noqa: D205
    command = state.get("command")
    if command == "reset":
        return "reset_conversation"
    if command == "reopen":
        return "reopen_topic"
    if command is not None:
        raise BadCommand(f"no node carries out the command {command!r}")
    window = state.get("window") or []
    answered = bool(window) and isinstance(window[-1], AIMessage) and bool(window[-1].tool_calls)
    if answered:
        return AgentState.TOOL_EXECUTION
    decided = state.get("agent_state") == AgentState.TOOL_EXECUTION and isinstance(
        window[-1] if window else None, ToolMessage
    )  # the served graph runs the turn on after calls decided in its run before (no message)
    return AgentState.RESPONSE if decided else "topic_detect"


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
) -> Literal[AgentState.TOOL_EXECUTION, AgentState.RESPONSE, "__end__"]:
    """As ``route_assistant``, but calls that wait for a confirmation end the turn graph first:
    the graph around it (``served``) then holds them in its own state, where a chat client shows
    them, and runs the turn graph again to ask.
    """  # noqa: D205
    target = await route_assistant(state)
    if target is AgentState.TOOL_EXECUTION:
        context = await prepared(get_runtime(KeelContext).context)
        if waiting_calls(cast(KeelState, state), context.resources.tools) is not None:
            return "__end__"  # END
    return target


class DecidedView(WindowView, total=False):
    """What tells whether the turn's calls were decided: the window and where the turn is."""

    agent_state: str


async def route_tools_handing_over(
    state: DecidedView,
) -> Literal[AgentState.RESPONSE, "__end__"]:
    """After tool_execution in the served turn graph: calls that needed a yes end the turn graph
    first, so the graph around it saves their answer and results in a checkpoint of its own (a
    reply regenerated from there runs the response again, never the question); then it goes on.
    """  # noqa: D205
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


KeelGraph = CompiledStateGraph[KeelState, KeelContext, TurnInput, TurnOutput]


def build_graph(
    checkpointer: BaseCheckpointSaver | None = None,
    store: BaseStore | None = None,
    *,
    nested: bool = False,
) -> KeelGraph:
    """Build and compile keel's turn graph.

    ``nested``: the turn graph of ``served``, which reads and returns the whole state and ends
    before asking for a confirmation (``route_assistant_handing_over``).
    """
    g: StateGraph[Any, Any, Any, Any]
    if nested:
        g = StateGraph(KeelState, context_schema=KeelContext)
    else:
        g = StateGraph(
            KeelState, context_schema=KeelContext, input_schema=TurnInput, output_schema=TurnOutput
        )
    g.add_node("user_input", node(user_input))
    g.add_node("reset_conversation", node(reset_conversation))
    g.add_node("reopen_topic", node(reopen_topic))
    g.add_node("topic_detect", node(topic_detect))
    g.add_node("reset", node(reset))
    g.add_node("plan", node(plan))
    g.add_node("resume", node(resume))
    g.add_node("assistant", node(assistant, AgentState.ASSISTANT))
    g.add_node("tool_execution", node(tool_execution, AgentState.TOOL_EXECUTION))
    g.add_node("response", node(response, AgentState.RESPONSE))

    g.add_edge(START, "user_input")
    g.add_conditional_edges(
        "user_input",
        route_input,
        {
            "reset_conversation": "reset_conversation",
            "reopen_topic": "reopen_topic",
            "topic_detect": "topic_detect",
            AgentState.TOOL_EXECUTION: "tool_execution",
            AgentState.RESPONSE: "response",
        },
    )
    g.add_edge("reset_conversation", END)
    g.add_edge("reopen_topic", END)
    g.add_conditional_edges("topic_detect", route_reset, {"reset": "reset", "plan": "plan"})
    routes: dict[Hashable, str] = {"resume": "resume", AgentState.ASSISTANT: "assistant"}
    g.add_conditional_edges("reset", route_plan, {"plan": "plan", **routes})
    g.add_conditional_edges("plan", route_context, routes)
    g.add_edge("resume", "assistant")
    if nested:
        g.add_conditional_edges(
            "assistant",
            route_assistant_handing_over,
            {**path_map(AgentState.ASSISTANT), END: END},
        )
    else:
        g.add_conditional_edges("assistant", route_assistant, path_map(AgentState.ASSISTANT))
    if nested:  # decided calls: the graph around keeps the answer in a checkpoint, then goes on
        g.add_conditional_edges(
            "tool_execution",
            route_tools_handing_over,
            {AgentState.RESPONSE: "response", END: END},
        )
    else:
        g.add_edge("tool_execution", "response")  # the one way out of TOOL_EXECUTION
    g.add_conditional_edges("response", route_response, {**path_map(AgentState.RESPONSE), **routes})
    return g.compile(checkpointer=checkpointer, store=store, name="keel_turn" if nested else "keel")


async def route_turn(state: DecidedView) -> Literal["turn", "__end__"]:
    """After a run of the turn graph: run it again when it ended on calls that wait for a
    confirmation (to ask) or on decided ones (to go on), else the turn is over.
    """  # noqa: D205
    context = await prepared(get_runtime(KeelContext).context)
    tools = context.resources.tools
    again = waiting_calls(cast(KeelState, state), tools) is not None or ran_after_a_yes(
        cast(KeelState, state), tools
    )
    return "turn" if again else "__end__"  # END


def served(checkpointer: BaseCheckpointSaver | None = None) -> KeelGraph:
    """The turn graph as one node of a graph around it, for LangGraph servers.

    A server saves a checkpoint at every step of the graph it runs; the steps inside the turn are
    saved in the turn's own namespace, so the thread's history holds a few checkpoints a turn and a
    chat client (Agent Chat UI reads the newest ten) can branch from any recent message. The turn's
    streams (the assistant's tokens, keel's events, its nodes' updates) come from inside it: a
    client asks for them with ``subgraphs=True`` (the SDK's ``stream_subgraphs=True``).
    """
    inner = build_graph(nested=True)

    async def turn(state: KeelState, runtime: Runtime[KeelContext]) -> dict[str, Any]:
        """One run of the turn graph; its message lists are taken as they are, order included."""
        done: dict[str, Any] = await inner.ainvoke(state, context=runtime.context)
        lists = {
            key: unstreamed([RemoveMessage(id=REMOVE_ALL_MESSAGES), *done.get(key, [])])
            for key in ("messages", "window")
        }
        return {**done, **lists}

    g = StateGraph(
        KeelState, context_schema=KeelContext, input_schema=TurnInput, output_schema=TurnOutput
    )
    g.add_node("turn", turn)
    g.add_edge(START, "turn")
    g.add_conditional_edges("turn", route_turn, {"turn": "turn", END: END})
    return g.compile(checkpointer=checkpointer, name="keel")


graph = served()
"""The graph for LangGraph servers (``langgraph.json``): the server brings the checkpointer."""
