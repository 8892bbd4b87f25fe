"""The graph builder: the one place that knows how keel's nodes are wired.

``build_graph(checkpointer=None, store=None)`` returns the compiled graph of one turn::

    START -> user_input -> topic_detect -> reset -> plan -> [resume] -> assistant
    assistant -> tool_execution | response;  tool_execution -> response
    response -> assistant | END

The four state nodes are wrapped so that entering one checks the transition table and records the
new ``agent_state``; the conditional edges take their path maps from the same table.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, Literal

import structlog
from langchain_core.messages import AIMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime, get_runtime
from langgraph.store.base import BaseStore

from graphs.agent_state import AgentState, Target, path_map, validate_transition
from graphs.state import KeelState, TurnInput, TurnOutput
from nodes.assistant import assistant
from nodes.plan import plan
from nodes.reset import reset
from nodes.response import response
from nodes.resume import context_exhausted, resume
from nodes.runtime import KeelContext
from nodes.tools import tool_execution
from nodes.topic import topic_detect
from nodes.user_input import user_input
from tools.pause import pause_point

log = structlog.get_logger(__name__)

NodeFn = Callable[[KeelState, Runtime[KeelContext]], Any]


def current_state(state: KeelState) -> AgentState:
    """The state machine's position as an AgentState (USER_INPUT for a new conversation)."""
    return AgentState(state.get("agent_state") or AgentState.USER_INPUT)


def enter(target: AgentState, node: NodeFn) -> Callable[..., Awaitable[dict[str, Any]]]:
    """Wrap ``node`` so that running it is the transition into ``target``."""

    async def state_node(state: KeelState, runtime: Runtime[KeelContext]) -> dict[str, Any]:
        source = current_state(state)
        if target is not AgentState.USER_INPUT:
            validate_transition(source, target)
        pause_point(f"before:{target}")
        update = node(state, runtime)
        if isinstance(update, Awaitable):
            update = await update
        log.debug("transition", src=str(source), dst=str(target))
        return {**update, "agent_state": target.value}

    state_node.__name__ = str(target)
    return state_node


def on_loop(fn: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
    """``fn`` as a coroutine function, so LangGraph calls it on the event loop.

    LangGraph runs a plain function (a node, a router) in a worker thread when the graph runs
    asynchronously; for the few microseconds these take, the hop costs more than the work.
    """
    if inspect.iscoroutinefunction(fn):
        return fn

    async def run(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    run.__name__ = run.__qualname__ = fn.__name__
    run.__doc__ = fn.__doc__
    run.__signature__ = inspect.signature(fn)  # type: ignore[attr-defined]
    return run


def route_assistant(state: KeelState) -> Literal[AgentState.TOOL_EXECUTION, AgentState.RESPONSE]:
    """After the assistant: run tools when it asked for any, else decide in RESPONSE."""
    last = state["window"][-1]
    if isinstance(last, AIMessage) and last.tool_calls:
        return AgentState.TOOL_EXECUTION
    return AgentState.RESPONSE


def route_context(state: KeelState) -> Literal["resume", AgentState.ASSISTANT]:
    """Before the assistant: open a fresh window first when the old one is exhausted."""
    exhausted = context_exhausted(state, get_runtime(KeelContext).context)
    return "resume" if exhausted else AgentState.ASSISTANT


def route_response(state: KeelState) -> Target:
    """After the response node: END when the turn is over, else on to the assistant.

    The way to the assistant passes through resume when the context is exhausted; as a state
    transition it is RESPONSE -> ASSISTANT either way.
    """
    if state.get("turn_over"):
        validate_transition(AgentState.RESPONSE, END)
        return END
    validate_transition(AgentState.RESPONSE, AgentState.ASSISTANT)
    return route_context(state)


KeelGraph = CompiledStateGraph[KeelState, KeelContext, TurnInput, TurnOutput]


def build_graph(
    checkpointer: BaseCheckpointSaver | None = None, store: BaseStore | None = None
) -> KeelGraph:
    """Build and compile keel's turn graph."""
    g = StateGraph(
        KeelState, context_schema=KeelContext, input_schema=TurnInput, output_schema=TurnOutput
    )
    g.add_node("user_input", enter(AgentState.USER_INPUT, user_input))
    g.add_node("topic_detect", topic_detect)
    g.add_node("reset", on_loop(reset))
    g.add_node("plan", on_loop(plan))
    g.add_node("resume", resume)
    g.add_node("assistant", enter(AgentState.ASSISTANT, assistant))
    g.add_node("tool_execution", enter(AgentState.TOOL_EXECUTION, tool_execution))
    g.add_node("response", enter(AgentState.RESPONSE, response))

    g.add_edge(START, "user_input")
    g.add_edge("user_input", "topic_detect")
    g.add_edge("topic_detect", "reset")
    g.add_edge("reset", "plan")
    routes: dict[Hashable, str] = {"resume": "resume", AgentState.ASSISTANT: "assistant"}
    g.add_conditional_edges("plan", on_loop(route_context), routes)
    g.add_edge("resume", "assistant")
    g.add_conditional_edges("assistant", on_loop(route_assistant), path_map(AgentState.ASSISTANT))
    for dst in path_map(AgentState.TOOL_EXECUTION).values():
        g.add_edge("tool_execution", dst)
    g.add_conditional_edges(
        "response", on_loop(route_response), {**path_map(AgentState.RESPONSE), **routes}
    )
    return g.compile(checkpointer=checkpointer, store=store, name="keel")
