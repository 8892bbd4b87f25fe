"""What LangGraph itself takes for a turn of keel's shape: keel's graph with nodes that do nothing.

The same state schema, the same nodes, edges and routers, the same stream modes and durability
as a keel turn of one tool call ("Add item k", the last mission complete: user_input,
topic_detect, reset, plan, assistant, tool_execution, response, assistant, response, in one graph
run), but every node only writes the messages a turn writes. On the in-memory saver and on
SQLite (LangGraph's ``AsyncSqliteSaver``, and keel's saver). What a keel turn takes beyond these
figures is keel's own work; below them no change to keel's nodes can go without changing the
graph.

    python bench/engine_floor.py --turns 300
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, ToolMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import REMOVE_ALL_MESSAGES

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.plain_server import SQLITE_PRAGMAS  # noqa: E402
from keel.checkpoints.backend import open_backend  # noqa: E402
from keel.graphs.runner import RESULT_KEYS, STREAM_MODES  # noqa: E402
from keel.nodes.state.schema import KeelState, TurnInput, TurnOutput  # noqa: E402


def build(saver: BaseCheckpointSaver) -> Any:
    """The graph of keel's nodes and edges, each node doing only a turn's writes."""

    async def user_input(state: KeelState) -> dict[str, Any]:
        human = HumanMessage(state.get("content", ""))
        return {"window": [RemoveMessage(id=REMOVE_ALL_MESSAGES), human], "turn_over": False}

    async def nothing(state: KeelState) -> dict[str, Any]:
        return {}

    async def assistant(state: KeelState) -> dict[str, Any]:
        if state["window"][-1].type == "human":
            call = {"name": "create_todo_task", "args": {"title": "x"}, "id": "c1"}
            return {"window": [AIMessage("", tool_calls=[call])], "agent_state": "assistant"}
        return {"window": [AIMessage("Created task: x")], "agent_state": "assistant"}

    async def tool_execution(state: KeelState) -> dict[str, Any]:
        return {"window": [ToolMessage("{}", tool_call_id="c1")], "agent_state": "tool_execution"}

    async def response(state: KeelState) -> dict[str, Any]:
        last = state["window"][-1]
        return {"turn_over": last.type == "ai", "agent_state": "response"}

    g = StateGraph(KeelState, input_schema=TurnInput, output_schema=TurnOutput)
    for name, fn in (
        ("user_input", user_input),
        ("topic_detect", nothing),
        ("reset", nothing),
        ("plan", nothing),
        ("resume", nothing),
        ("assistant", assistant),
        ("tool_execution", tool_execution),
        ("response", response),
    ):
        g.add_node(name, fn)

    def to(target: str) -> Callable[[KeelState], Any]:
        async def route(state: KeelState) -> str:
            return target

        return route

    async def after_assistant(state: KeelState) -> str:
        return "tool_execution" if state["window"][-1].tool_calls else "response"

    async def after_response(state: KeelState) -> str:
        return END if state.get("turn_over") else "assistant"

    g.add_edge(START, "user_input")
    g.add_conditional_edges("user_input", to("topic_detect"), ["topic_detect", "tool_execution"])
    g.add_conditional_edges("topic_detect", to("reset"), ["reset", "plan"])
    g.add_conditional_edges("reset", to("plan"), ["plan", "resume", "assistant"])
    g.add_conditional_edges("plan", to("assistant"), ["assistant", "resume"])
    g.add_edge("resume", "assistant")
    g.add_conditional_edges("assistant", after_assistant, ["tool_execution", "response"])
    g.add_conditional_edges("tool_execution", to("response"), ["response", "tool_execution"])
    g.add_conditional_edges("response", after_response, [END, "assistant"])
    return g.compile(checkpointer=saver)


async def turn(graph: Any, config: dict[str, Any], k: int) -> None:
    """One turn: one graph run, its checkpoint written as it ends."""
    async for _mode, _chunk in graph.astream(
        {"content": f"Add item {k}"},
        config,
        stream_mode=STREAM_MODES,
        durability="exit",
        output_keys=RESULT_KEYS,
    ):
        pass


@asynccontextmanager
async def saver_of(kind: str, workdir: Path) -> AsyncIterator[BaseCheckpointSaver]:
    if kind == "memory":
        yield InMemorySaver()
    elif kind == "sqlite (LangGraph's AsyncSqliteSaver)":
        async with AsyncSqliteSaver.from_conn_string(str(workdir / "stock.db")) as saver:
            for pragma in SQLITE_PRAGMAS:
                await saver.conn.execute(pragma)
            yield saver
    else:
        async with open_backend(f"sqlite:///{workdir / 'keel.db'}") as backend:
            yield backend.saver


async def measure(kind: str, turns: int, workdir: Path) -> float:
    """Milliseconds per turn (the median of five slices of the run)."""
    opened: AbstractAsyncContextManager[BaseCheckpointSaver] = saver_of(kind, workdir)
    async with opened as saver:
        graph = build(saver)
        config = {"configurable": {"thread_id": kind}}
        for k in range(20):
            await turn(graph, config, k)
        slices = []
        for _ in range(5):
            start = time.perf_counter()
            for k in range(turns // 5):
                await turn(graph, config, k)
            slices.append((time.perf_counter() - start) * 1000 / (turns // 5))
        return statistics.median(slices)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300)
    args = parser.parse_args()
    kinds = ["memory", "sqlite (LangGraph's AsyncSqliteSaver)", "sqlite (keel's saver)"]
    print("| saver | ms/turn |")
    print("|---|---|")
    with tempfile.TemporaryDirectory(prefix="keel-floor-") as tmp:
        for kind in kinds:
            print(f"| {kind} | {await measure(kind, args.turns, Path(tmp)):.2f} |")


if __name__ == "__main__":
    asyncio.run(main())
