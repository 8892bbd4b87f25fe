"""The graph builder: the one place that knows how keel's nodes are wired.

``build_graph(checkpointer=None)`` returns the compiled graph of one turn::

    START -> user_input -> topic_detect -> [reset] -> [plan] -> [resume] -> assistant
    user_input -> tool_execution  (the message answers a waiting confirmation)
    user_input -> response  (no message, calls a yes decided: the served graph goes on)
    user_input -> reset_conversation | reopen_topic | remind -> END  (the input is a command)
    assistant -> tool_execution | response
    tool_execution -> response  (a confirmation is waited for inside it, with ``interrupt``)
    tool_execution -> tool_execution  (a question just put: checkpointed, then waited on)
    response -> assistant | END

Every node is wrapped so that its ``runtime.context`` is the caller's ``KeelContext`` with the
process's resources (``keel.graphs.resources.prepared``); the state nodes' wrappers also check the
transition table and record the new ``agent_state``, and every wrapper adds what its node adds to
the window (the assistant's messages, the tool results) to ``messages``, the conversation as
LangGraph's clients show it (``keel.nodes.support.message_log.with_conversation``). The conditional
edges take their path maps from the same table; the routers are in ``keel.graphs.routes``. Only
the assistant's text reaches the
``messages`` stream: the other nodes write the window, and everything ``messages``, as
``unstreamed`` updates.

``served(checkpointer)`` is the graph every turn runs, in keel's own process and on a LangGraph
server: the turn graph as the one node of a graph around it, which LangGraph checkpoints a few
times a turn (its input, the model's calls before they run, its end). ``graph`` is the one a
LangGraph server (``langgraph dev``, Studio) loads through ``langgraph.json``; it has no
checkpointer of its own (the server brings one). ``build_graph`` alone is the turn graph a
notebook steps through node by node.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Awaitable, Callable, Hashable
from typing import Any

import structlog
from langchain_core.messages import RemoveMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.graph import Graph
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.constants import CONFIG_KEY_CHECKPOINTER
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Durability

from keel.graphs.resources import prepared
from keel.graphs.routes import (
    route_assistant,
    route_assistant_handing_over,
    route_context,
    route_input,
    route_plan,
    route_reset,
    route_response,
    route_tools,
    route_tools_handing_over,
    route_turn,
)
from keel.nodes.assistant import assistant
from keel.nodes.mission import reset
from keel.nodes.plan import plan
from keel.nodes.remind import remind
from keel.nodes.reopen_topic import reopen_topic
from keel.nodes.reset_conversation import reset_conversation
from keel.nodes.response import response
from keel.nodes.resume import resume
from keel.nodes.run_context import KeelContext, conversation_id
from keel.nodes.state.machine import AgentState, path_map, validate_transition
from keel.nodes.state.reducers import unstreamed
from keel.nodes.state.schema import (
    KeelState,
    TurnInput,
    TurnOutput,
)
from keel.nodes.support.message_log import with_conversation
from keel.nodes.tool_execution import tool_execution
from keel.nodes.topic import topic_detect
from keel.nodes.user_input import user_input
from keel.tools.crash_points import pause_point

log = structlog.get_logger(__name__)

UNCHECKPOINTED: RunnableConfig = {"configurable": {CONFIG_KEY_CHECKPOINTER: None}}
"""The turn graph's run inside ``served`` borrows no checkpointer from the graph around it (which
would save each of its steps). Its graph keeps ``checkpointer=None``, not ``False``, so that
Studio still draws its nodes inside the node ``turn``."""
INNER_DURABILITY: Durability = "exit"
"""Given explicitly: the run would inherit the graph around it's ("sync"), which a run without a
checkpointer cannot keep (LangGraph 1.2 fails on it); it warns that it has no effect instead."""
warnings.filterwarnings("ignore", message="`durability` has no effect when no checkpointer")

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
        if context.writer is not None:  # keel's events go to the stream of the graph around
            runtime = runtime.override(stream_writer=context.writer)
        if context.turn is None:  # keel's runner took the turn lock, the owner checked with it
            await context.resources.conversations.claim(conversation_id(runtime), context.user_id)
        source = current_state(state)
        if enters is not None:
            validate_transition(source, enters)  # staying (a resumed wait) is no transition
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


KeelGraph = CompiledStateGraph[KeelState, KeelContext, TurnInput, TurnOutput]


def build_graph(
    checkpointer: BaseCheckpointSaver | None = None,
    *,
    nested: bool = False,
) -> KeelGraph:
    """Build and compile keel's turn graph.

    ``nested``: the turn graph of ``served``, which reads and returns the whole state and ends
    on the model's tool calls, before any runs (``route_assistant_handing_over``).
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
    g.add_node("remind", node(remind))
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
            "remind": "remind",
            "topic_detect": "topic_detect",
            AgentState.TOOL_EXECUTION: "tool_execution",
            AgentState.RESPONSE: "response",
        },
    )
    g.add_edge("reset_conversation", END)
    g.add_edge("reopen_topic", END)
    g.add_edge("remind", END)
    g.add_conditional_edges("topic_detect", route_reset, {"reset": "reset", "plan": "plan"})
    routes: dict[Hashable, str] = {"resume": "resume", AgentState.ASSISTANT: "assistant"}
    g.add_conditional_edges("reset", route_plan, {"plan": "plan", **routes})
    g.add_conditional_edges("plan", route_context, routes)
    g.add_edge("resume", "assistant")
    if nested:  # the model's calls: the graph around checkpoints them before any runs
        g.add_conditional_edges(
            "assistant",
            route_assistant_handing_over,
            {AgentState.RESPONSE: str(AgentState.RESPONSE), END: END},
        )
    else:
        g.add_conditional_edges("assistant", route_assistant, path_map(AgentState.ASSISTANT))
    if nested:  # decided calls: the graph around keeps the answer in a checkpoint, then goes on
        g.add_conditional_edges(
            "tool_execution",
            route_tools_handing_over,
            {AgentState.RESPONSE: "response", END: END},
        )
    else:  # out of TOOL_EXECUTION to the response; back in to wait on a question just put
        g.add_conditional_edges(
            "tool_execution",
            route_tools,
            {AgentState.TOOL_EXECUTION: "tool_execution", AgentState.RESPONSE: "response"},
        )
    g.add_conditional_edges("response", route_response, {**path_map(AgentState.RESPONSE), **routes})
    return g.compile(checkpointer=checkpointer, name="keel_turn" if nested else "keel")


def ending_node(graph: KeelGraph) -> str:
    """The node a state update written from outside the nodes stands for, as if a turn ended
    there: the graph around the turn graph's (``served``), or the turn graph's response node.
    """  # noqa: D205
    return "turn" if "turn" in graph.nodes else "response"


LISTS = {"messages", "window"}
"""The state's message lists: the turn graph gives them whole; what is written is what changed."""


def _same(after: Any, before: Any, is_list: bool) -> bool:
    """The turn graph left a value as it was: the same object (a list: the same messages)."""
    if after is before:
        return True
    if not is_list or not isinstance(before, list) or len(after) != len(before):
        return False
    return all(a is b for a, b in zip(after, before, strict=True))


def served(checkpointer: BaseCheckpointSaver | None = None) -> KeelGraph:
    """The graph every turn runs: the turn graph as the one node of a graph around it.

    The graph around it is what LangGraph checkpoints (durability "sync", ``keel.graphs.runner``;
    a LangGraph server brings its own checkpointer): the turn's input first, then the model's
    tool calls before any of them runs (the turn graph ends on them,
    ``route_assistant_handing_over``, and runs again to carry them out, or to ask about them),
    then what the turn ended with. So a
    turn a crash cut off stands at a checkpoint with its step left to run, and LangGraph runs it
    on from there; the tool-call ledger answers any call that ran already. The steps inside the
    turn graph are not checkpointed (``UNCHECKPOINTED``): a turn costs a few writes, not one a
    node. The turn's streams reach the caller's stream whether or not it streams subgraphs:
    keel's events through the ``turn`` node's stream writer (``KeelContext.writing_to``), the
    model's tokens as the graph around it's (``keel.nodes.models.model_call.tokens_at_the_top``);
    the turn graph's own steps (``updates``, ``values``) only with ``subgraphs=True`` (the SDK's
    ``stream_subgraphs=True``, as Studio streams). It is drawn with the turn graph's nodes inside
    ``turn`` (``ServedGraph``).
    """
    inner = build_graph(nested=True)

    async def turn(state: KeelState, runtime: Runtime[KeelContext]) -> dict[str, Any]:
        """One run of the turn graph: what it changed (its message lists taken as they are, order
        included), so a checkpoint's pending writes hold only that.
        """  # noqa: D205
        context = (await prepared(runtime.context)).writing_to(runtime.stream_writer)
        done: dict[str, Any] = await inner.ainvoke(
            state, UNCHECKPOINTED, context=context, durability=INNER_DURABILITY
        )
        given: dict[str, Any] = dict(state)
        changed = {
            k: v for k, v in done.items() if k not in given or not _same(v, given[k], k in LISTS)
        }
        for key in LISTS & changed.keys():
            changed[key] = unstreamed(_list_update(changed[key], given.get(key) or []))
        return changed

    g = StateGraph(
        KeelState, context_schema=KeelContext, input_schema=TurnInput, output_schema=TurnOutput
    )
    g.add_node("turn", turn)
    g.add_edge(START, "turn")
    g.add_conditional_edges("turn", route_turn, {"turn": "turn", END: END})
    compiled = g.compile(checkpointer=checkpointer, name="keel")
    compiled.__class__ = ServedGraph
    return compiled


class ServedGraph(CompiledStateGraph[KeelState, KeelContext, TurnInput, TurnOutput]):
    """The served graph, drawn with the turn graph's nodes inside its node ``turn``, unless asked
    for more depth: the picture a LangGraph server gives by default (``/assistants/{id}/graph``
    without ``xray``) shows the state machine, not one box.
    """  # noqa: D205

    def get_graph(self, config: RunnableConfig | None = None, *, xray: int | bool = False) -> Graph:
        """The drawing, one level of subgraphs at least."""
        return super().get_graph(config, xray=xray or 1)

    async def aget_graph(
        self, config: RunnableConfig | None = None, *, xray: int | bool = False
    ) -> Graph:
        """The drawing, one level of subgraphs at least."""
        return await super().aget_graph(config, xray=xray or 1)


graph = served()
"""The graph for LangGraph servers (``langgraph.json``): the server brings the checkpointer."""


def _list_update(after: list[Any], before: list[Any]) -> list[Any]:
    """The update that turns the message list ``before`` into ``after``: the messages dropped from
    its start removed, the new ones added, when that is how it changed (a turn adds its messages,
    the bound drops the oldest); otherwise ``after`` whole, in place of everything.
    """  # noqa: D205
    start = next((i for i, m in enumerate(before) if after and m is after[0]), len(before))
    kept = len(before) - start
    added = after[kept:]
    ids = {m.id for m in before}
    if (
        len(after) >= kept
        and all(a is b for a, b in zip(after[:kept], before[start:], strict=True))
        and all(m.id is not None for m in before[:start])
        and not any(m.id in ids for m in added)
    ):
        return [*(RemoveMessage(id=m.id) for m in before[:start]), *added]
    return [RemoveMessage(id=REMOVE_ALL_MESSAGES), *after]
