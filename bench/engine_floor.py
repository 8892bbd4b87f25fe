"""What LangGraph itself takes for a turn of keel's shape: keel's graphs with nodes that do nothing.

The same state schema, nodes, edges and routers as a keel turn of one tool call ("Add item k",
the last mission complete), in the same two graphs (``keel.graphs.builder.served``): the turn
graph, run as the one node ``turn`` of a graph around it that LangGraph checkpoints before each
step (durability "sync"). Its first run (user_input, topic_detect, reset, plan, assistant) ends on
the model's tool call; the graph around it checkpoints the call and runs it again
(user_input, tool_execution, response, assistant, response). Every node only writes the messages
a turn writes, to ``window`` and ``messages`` (which keeps the newest 200, as keel's does). On the
in-memory saver and on SQLite (LangGraph's ``AsyncSqliteSaver``, and keel's saver). What a keel
turn takes beyond these figures is keel's own work; below them no change to keel's nodes can go
without changing the graphs. In the same run, taken in turn with the floors: keel's own turn
through the service's turn path, and plain LangGraph's ReAct turn (``bench/plain_react.py``).
And the floor of the other shape that keeps the model's calls checkpointed before they run: the
turn graph alone, durability "exit", in two runs, the first paused before ``tool_execution``.

    python bench/engine_floor.py --turns 300 --length 20
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import structlog
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, ToolMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import REMOVE_ALL_MESSAGES

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.plain_react import build_plain_graph  # noqa: E402
from bench.plain_server import SQLITE_PRAGMAS, open_plain  # noqa: E402
from keel.api.service import open_service  # noqa: E402
from keel.checkpoints.backend import open_backend  # noqa: E402
from keel.graphs.builder import INNER_DURABILITY, LISTS, UNCHECKPOINTED  # noqa: E402
from keel.graphs.runner import DURABILITY, RESULT_KEYS, STREAM_MODES  # noqa: E402
from keel.graphs.settings import Settings  # noqa: E402
from keel.nodes.state.schema import KeelState, TurnInput, TurnOutput  # noqa: E402


def build_turn_graph(saver: BaseCheckpointSaver | None = None) -> Any:
    """The turn graph of keel's nodes and edges, each node doing only a turn's writes.

    With ``saver``, the other shape measured: the turn graph alone, checkpointed by ``saver``, the
    model's calls going on to ``tool_execution`` (the runner pauses the run before it).
    """

    async def user_input(state: KeelState) -> dict[str, Any]:
        if state["window"] and getattr(state["window"][-1], "tool_calls", None):
            return {}  # the run after the model's calls: nothing new came in
        human = HumanMessage(state.get("content", ""), id=str(uuid.uuid4()))
        window = [RemoveMessage(id=REMOVE_ALL_MESSAGES), human]
        return {"window": window, "messages": [human], "turn_over": False}

    async def nothing(state: KeelState) -> dict[str, Any]:
        return {}

    async def assistant(state: KeelState) -> dict[str, Any]:
        if state["window"][-1].type == "human":
            call = {"name": "create_todo_task", "args": {"title": "x"}, "id": str(uuid.uuid4())}
            said = AIMessage("", tool_calls=[call], id=str(uuid.uuid4()))
        else:
            said = AIMessage("Created task: x", id=str(uuid.uuid4()))
        return {"window": [said], "messages": [said], "agent_state": "assistant"}

    async def tool_execution(state: KeelState) -> dict[str, Any]:
        call_id = state["window"][-1].tool_calls[0]["id"]
        result = ToolMessage("{}", tool_call_id=call_id, id=str(uuid.uuid4()))
        return {"window": [result], "messages": [result], "agent_state": "tool_execution"}

    async def response(state: KeelState) -> dict[str, Any]:
        last = state["window"][-1]
        return {"turn_over": last.type == "ai", "agent_state": "response"}

    g = StateGraph(KeelState)
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

    def calls(state: KeelState) -> bool:
        return bool(state["window"]) and bool(getattr(state["window"][-1], "tool_calls", None))

    async def after_input(state: KeelState) -> str:
        return "tool_execution" if calls(state) else "topic_detect"

    async def after_assistant(state: KeelState) -> str:
        if calls(state):  # the calls end the turn graph's run, or the run pauses before them
            return END if saver is None else "tool_execution"
        return "response"

    async def after_response(state: KeelState) -> str:
        return END if state.get("turn_over") else "assistant"

    g.add_edge(START, "user_input")
    g.add_conditional_edges("user_input", after_input, ["topic_detect", "tool_execution"])
    g.add_conditional_edges("topic_detect", to("reset"), ["reset", "plan"])
    g.add_conditional_edges("reset", to("plan"), ["plan", "resume", "assistant"])
    g.add_conditional_edges("plan", to("assistant"), ["assistant", "resume"])
    g.add_edge("resume", "assistant")
    g.add_conditional_edges("assistant", after_assistant, ["response", "tool_execution", END])
    g.add_conditional_edges("tool_execution", to("response"), ["response", END])
    g.add_conditional_edges("response", after_response, [END, "assistant"])
    return g.compile(checkpointer=saver)


def build(saver: BaseCheckpointSaver) -> Any:
    """The graph around the turn graph, as ``served`` has it: what its run changed is written."""
    inner = build_turn_graph()

    async def turn(state: KeelState) -> dict[str, Any]:
        done = await inner.ainvoke(state, UNCHECKPOINTED, durability=INNER_DURABILITY)
        changed = {k: v for k, v in done.items() if k not in LISTS and v is not state.get(k)}
        for key in LISTS:
            before = {m.id for m in state.get(key) or []}
            added = [m for m in done.get(key) or [] if m.id not in before]
            if key == "window" and added and added[0].type == "human":
                changed[key] = [RemoveMessage(id=REMOVE_ALL_MESSAGES), *added]
            elif added:
                changed[key] = added
        return changed

    async def again(state: KeelState) -> str:
        pending = state["window"] and getattr(state["window"][-1], "tool_calls", None)
        return "turn" if pending and not state.get("turn_over") else END

    g = StateGraph(KeelState, input_schema=TurnInput, output_schema=TurnOutput)
    g.add_node("turn", turn)
    g.add_edge(START, "turn")
    g.add_conditional_edges("turn", again, ["turn", END])
    return g.compile(checkpointer=saver)


async def turn(graph: Any, config: dict[str, Any], k: int) -> None:
    """One turn: one run of the graph around the turn graph, checkpointed before each step."""
    async for _mode, _chunk in graph.astream(
        {"content": f"Add item {k}"},
        config,
        stream_mode=STREAM_MODES,
        durability=DURABILITY,
        output_keys=RESULT_KEYS,
    ):
        pass


async def flat_turn(graph: Any, config: dict[str, Any], k: int) -> None:
    """One turn of the flat shape: two runs, durability "exit", the first paused before the tools
    (so the model's calls are checkpointed before they run, and nothing else is until the end).
    """  # noqa: D205
    given: dict[str, Any] | None = {"content": f"Add item {k}"}
    for _run in range(2):
        async for _mode, _chunk in graph.astream(
            given,
            config,
            stream_mode=STREAM_MODES,
            durability="exit",
            output_keys=RESULT_KEYS,
            interrupt_before=["tool_execution"],
        ):
            pass
        given = None  # the second run carries on from the pause


@asynccontextmanager
async def floor_turns(kind: str, workdir: Path) -> AsyncIterator[Callable[[str, int], Any]]:
    """One turn of the floor graph on the saver ``kind``: ``turn(thread, k)``."""
    if kind == FLAT:
        async with open_backend(f"sqlite:///{workdir / 'flat.db'}") as backend:
            graph = build_turn_graph(backend.saver)
            yield lambda thread, k: flat_turn(graph, {"configurable": {"thread_id": thread}}, k)
    elif kind == "memory":
        graph = build(InMemorySaver())
        yield lambda thread, k: turn(graph, {"configurable": {"thread_id": thread}}, k)
    elif kind == "sqlite, LangGraph's AsyncSqliteSaver":
        async with AsyncSqliteSaver.from_conn_string(str(workdir / "stock.db")) as saver:
            for pragma in SQLITE_PRAGMAS:
                await saver.conn.execute(pragma)
            graph = build(saver)
            yield lambda thread, k: turn(graph, {"configurable": {"thread_id": thread}}, k)
    else:
        async with open_backend(f"sqlite:///{workdir / 'keel.db'}") as backend:
            graph = build(backend.saver)
            yield lambda thread, k: turn(graph, {"configurable": {"thread_id": thread}}, k)


@asynccontextmanager
async def keel_turns(workdir: Path) -> AsyncIterator[Callable[[str, int], Any]]:
    """Keel's own turn, through the API's turn path (``service.turns``), on SQLite."""
    async with open_service(Settings(database_url=f"sqlite:///{workdir / 'served.db'}")) as service:
        threads: dict[str, str] = {}

        async def one(thread: str, k: int) -> None:
            if thread not in threads:
                threads[thread] = (await service.conversations.create("bench"))["conversation_id"]
            result = await service.turns.take(threads[thread], "bench", f"Add item {k}")
            assert result.reply == f"Created task: item {k}", result.reply

        yield one


@asynccontextmanager
async def plain_turns(workdir: Path) -> AsyncIterator[Callable[[str, int], Any]]:
    """Plain LangGraph's turn (``bench/plain_react.py``) on its own ``AsyncSqliteSaver``."""
    async with open_plain(f"sqlite:///{workdir / 'plain.db'}") as (saver, store):
        graph = build_plain_graph(saver, store, "bench")

        async def one(thread: str, k: int) -> None:
            state = await graph.ainvoke(
                {"messages": [HumanMessage(f"Add item {k}")]},
                {"configurable": {"thread_id": thread}},
            )
            assert state["messages"][-1].text == f"Created task: item {k}"

        yield one


FLAT = "the other shape: one flat graph, durability exit, paused before the tools, keel's saver"
FLOORS = ["memory", "sqlite, LangGraph's AsyncSqliteSaver", "sqlite, keel's saver", FLAT]
KEEL = "keel's turn (the service's turn path, SQLite)"
PLAIN = "plain LangGraph's turn (ReAct graph, AsyncSqliteSaver)"


async def measure(turns: int, length: int, workdir: Path) -> dict[str, list[float]]:
    """Milliseconds per turn of each kind, in five slices taken in turn (so a slow spell of the
    machine falls on every kind alike), in conversations of ``length`` turns.
    """  # noqa: D205
    async with AsyncExitStack() as stack:
        runs = {
            kind: await stack.enter_async_context(floor_turns(kind, workdir)) for kind in FLOORS
        }
        runs[KEEL] = await stack.enter_async_context(keel_turns(workdir))
        runs[PLAIN] = await stack.enter_async_context(plain_turns(workdir))
        done = dict.fromkeys(runs, 0)

        async def next_turn(kind: str) -> None:
            await runs[kind](f"{kind}-{done[kind] // length}", done[kind] % length)
            done[kind] += 1

        for kind in runs:  # warm-up: one conversation each
            for _ in range(length):
                await next_turn(kind)
        slices: dict[str, list[float]] = {kind: [] for kind in runs}
        for _ in range(5):
            for kind in runs:
                start = time.perf_counter()
                for _ in range(turns // 5):
                    await next_turn(kind)
                slices[kind].append((time.perf_counter() - start) * 1000 / (turns // 5))
        return slices


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300, help="measured turns of each kind")
    parser.add_argument("--length", type=int, default=20, help="turns per conversation")
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(40))
    with tempfile.TemporaryDirectory(prefix="keel-floor-") as tmp:
        slices = await measure(args.turns, args.length, Path(tmp))
    median = {kind: statistics.median(ms) for kind, ms in slices.items()}
    print("| what | ms/turn (median of 5 slices) | slices |")
    print("|---|---|---|")
    for kind, ms in slices.items():
        print(f"| {kind} | {median[kind]:.2f} | {' / '.join(f'{x:.1f}' for x in ms)} |")
    floor = median["sqlite, keel's saver"]
    print(
        f"\nkeel's turn / the floor on the same saver: {median[KEEL] / floor:.2f}; "
        f"plain's turn / that floor: {median[PLAIN] / floor:.2f}; "
        f"keel/plain throughput: {median[PLAIN] / median[KEEL]:.2f}; "
        f"the other shape's floor / this one's: {median[FLAT] / floor:.2f}"
    )


if __name__ == "__main__":
    asyncio.run(main())
