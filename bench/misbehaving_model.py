"""What a user sees, and how long the turn takes, when the model misbehaves.

keel runs in process on a memory database, its model the local OpenAI-compatible test stub made
to misbehave each way (tests/stub_openai.py); each scenario is one conversation. Prints one row a
turn: the reply, whether it is complete, the events that tell what happened, and the seconds.
The waits scale with the settings given (a hang costs timeout x (1 + retries)).

    python bench/misbehaving_model.py --timeout 2 --retries 1 --turn-seconds 5
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import structlog

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from keel.checkpoints.backend import open_backend  # noqa: E402
from keel.graphs.builder import build_graph  # noqa: E402
from keel.graphs.resources import open_resources  # noqa: E402
from keel.graphs.run_turn import run_turn  # noqa: E402
from keel.graphs.settings import Settings  # noqa: E402
from keel.tools.tasks.todo import TODO_TOOLS
from tests.stub_openai import EMPTY_STREAM, HANG, RUNAWAY, StubOpenAI  # noqa: E402

Script = Callable[[StubOpenAI], None]


def create(title: str) -> list[dict]:
    return [{"name": "create_todo_task", "args": {"title": title}}]


SCENARIOS: list[tuple[str, list[tuple[str, Script]]]] = [
    (
        "never DONE, then a new request",
        [
            ("Hi! How are you today?", lambda s: s.always("Fine, thanks! How can I help?")),
            (
                "Add call the plumber",
                lambda s: (
                    setattr(s, "default", None),
                    s.reply(tool_calls=create("call the plumber")),
                    s.reply("Added.\nKEEL DONE: added"),
                ),
            ),  # noqa: E501
        ],
    ),
    (
        "500 after a tool call",
        [
            (
                "Add fix the tap",
                lambda s: (
                    s.reply(tool_calls=create("fix the tap")),
                    s.server_error(),
                    s.server_error(),
                ),
            )
        ],  # noqa: E501
    ),
    ("hang", [("Add oil the door", lambda s: s.misbehaving(HANG, 2))]),
    (
        "runaway answer",
        [
            (
                "Tell me a story",
                lambda s: (s.misbehaving(RUNAWAY), s.reply("The end.\nKEEL DONE: told")),
            )
        ],
    ),
    ("empty stream", [("Add buy milk", lambda s: s.misbehaving(EMPTY_STREAM, 2))]),
    (
        "repeated tool name",
        [("Add buy eggs", lambda s: s.repeated_name("create_todo_task", {"title": "buy eggs"}, 2))],
    ),  # noqa: E501
    (
        "structured output refused",
        [
            (
                "Add paint",
                lambda s: (
                    setattr(s, "refuse_plans", 500),
                    s.reply(tool_calls=create("paint")),
                    s.reply("Added.\nKEEL DONE: added"),
                ),
            )
        ],
    ),  # noqa: E501
    ("slower than the turn budget", [("Add sand the floor", lambda s: s.misbehaving(HANG, 1))]),
]


async def ignore(event: object) -> None:
    """A listener for the streamed tokens (a streaming client, as the chat page is)."""


def told(events: list[dict]) -> str:
    shown = []
    for e in events:
        if e["type"] in ("model_fallback", "state_updated"):
            shown.append(f"{e['type']}({e['data']['reason']})")
        elif e["type"] in ("loop_limit", "turn_timed_out", "tool_call"):
            shown.append(e["type"])
    return ", ".join(shown)


async def scenario(name: str, turns: list[tuple[str, Script]], args: argparse.Namespace) -> None:
    with StubOpenAI() as stub:
        budget = args.turn_seconds if name.startswith("slower") else 120
        settings = Settings(
            database_url="memory",
            openai_api_key="bench",
            openai_base_url=stub.base_url,
            model_timeout_seconds=60 if name.startswith("slower") else args.timeout,
            model_retries=args.retries,
            turn_seconds=budget,
            loop_limit=3,
            max_tokens=64,
        )
        async with open_backend("memory") as backend:
            graph = build_graph(checkpointer=backend.saver)
            resources = open_resources(backend.db, backend.saver, settings, tools=TODO_TOOLS)
            cid = str(uuid.uuid4())
            for n, (text, script) in enumerate(turns):
                if n == 0:
                    stub.reply("A title")  # the new topic's title
                script(stub)
                began = time.perf_counter()
                result = await run_turn(graph, cid, text, resources.context(), sink=ignore)
                seconds = time.perf_counter() - began
                reply = result.reply.replace("\n", " / ")[:110]
                print(  # noqa: T201
                    f"| {name} | {text} | {reply} | {result.complete} | {told(result.events)} "
                    f"| {seconds:.2f} |"
                )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--timeout", type=float, default=2.0, help="KEEL_MODEL_TIMEOUT_SECONDS")
    parser.add_argument("--retries", type=int, default=1, help="KEEL_MODEL_RETRIES")
    parser.add_argument("--turn-seconds", type=int, default=5, help="KEEL_TURN_SECONDS")
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(40))
    print("| misbehaviour | message | reply | complete | events | seconds |")  # noqa: T201
    print("| --- | --- | --- | --- | --- | --- |")  # noqa: T201
    for name, turns in SCENARIOS:
        await scenario(name, turns, args)


if __name__ == "__main__":
    asyncio.run(main())
