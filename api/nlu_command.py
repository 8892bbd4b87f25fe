"""``keel nlu eval`` and ``keel nlu train``: how well keel reads people, and making its model.

``keel nlu train`` makes the learned understanding anew (``keel.tools.understanding.nlu.training``).
``keel nlu eval`` with no file, or with labelled utterances (``{"text", "intent", "title"?,
"ref"?}``), reads them with the offline understanding and prints, per data set and category, how
many were understood, how many created titles are clean and how many non-requests left the tasks
untouched (``keel.tools.understanding.nlu.scoring``). With turn cases it runs each through the
graph: it reads JSON lines ``{"id", "category", "tasks": [...], "message", "answer"?, "expect":
{...}}``: the user's tasks before (a string is an open task, ``{"title", "completed"}`` any task;
ids 1, 2, ... in order), the message, the answer to a confirmation if one is asked (default "yes"),
and what must follow: ``tasks`` (the list after the turn; absent, it must be unchanged), ``confirm``
(the task ids the confirmation question names), ``reply_has`` / ``reply_lacks`` (text the reply
holds or not, in any case) and ``kind`` (the kind of answer when nothing changes: smalltalk, help,
offtopic, did_you_mean, which, not_found, reasked). Each message runs as one turn of the real graph
on an in-memory database, with the configured model (the offline one without a key), for a user of
its own. Prints accuracy per category, then overall; ``--failures`` lists what failed.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from keel.api.logs import configure_logging

if TYPE_CHECKING:  # keel's parts load when a command runs: `keel chat` starts without them
    from keel.api.service import Service
    from keel.tools.understanding.nlu.scoring import Tally

nlu_app = typer.Typer(help="Language understanding: how keel reads what people write.")

KINDS = {
    "smalltalk": {"greeting", "thanks", "goodbye", "wellbeing"},
    "did_you_mean": {"unknown", "unsure"},
}
"""A labelled kind and the offline model's kinds that count as it."""


def _case(line: str, number: int) -> dict[str, Any]:
    try:
        case = json.loads(line)
    except ValueError as exc:
        raise typer.BadParameter(f"line {number} is not JSON: {exc}") from None
    if not isinstance(case, dict) or not isinstance(case.get("message"), str):
        raise typer.BadParameter(f"line {number}: a case is an object with a message")
    if not isinstance(case.get("expect"), dict) or not isinstance(case.get("tasks", []), list):
        raise typer.BadParameter(f"line {number}: expect is an object, tasks a list")
    return case


def _task(task: Any) -> tuple[str, bool]:
    if isinstance(task, str):
        return task, False
    return str(task["title"]), bool(task.get("completed"))


async def _seed(service: Service, user: str, tasks: list[Any]) -> None:
    store = service.resources.store
    for task in tasks:
        title, completed = _task(task)
        made = await store.create(user, title)
        if completed:
            await store.complete(user, made["id"])


async def _last_kind(service: Service, conversation_id: str) -> str | None:
    from keel.graphs.runner import thread_config
    from keel.nodes.models.decisions import REPLY_KIND

    snap = await service.graph.aget_state(thread_config(conversation_id))
    for message in reversed(snap.values.get("window") or []):
        if message.type == "ai":
            kind = message.response_metadata.get(REPLY_KIND)
            return str(kind) if kind else None
    return None


async def run_case(service: Service, case: dict[str, Any]) -> list[str]:
    """What went wrong with ``case`` (empty when it passed)."""
    from keel.graphs.run_turn import run_turn

    user, conversation_id = f"nlu-{uuid.uuid4().hex[:12]}", str(uuid.uuid4())
    await _seed(service, user, case.get("tasks", []))
    context = service.turn_context(user)
    result = await run_turn(service.graph, conversation_id, case["message"], context)
    expect, problems = case["expect"], []
    asked = result.awaiting_confirmation
    if "confirm" in expect:
        named = sorted(asked["task_ids"]) if asked else None
        if named != sorted(expect["confirm"]):
            problems.append(f"confirmation named {named}, not {sorted(expect['confirm'])}")
    if asked:
        answer = case.get("answer", "yes")
        result = await run_turn(service.graph, conversation_id, answer, context)
    if expect.get("kind") == "reasked":
        if result.awaiting_confirmation is None:
            problems.append("the unclear answer was not asked again")
    elif "kind" in expect:
        kind = await _last_kind(service, conversation_id)
        if kind not in KINDS.get(expect["kind"], {expect["kind"]}):
            problems.append(f"answered as {kind}, not {expect['kind']}")
    reply = result.reply.casefold()
    has, lacks = expect.get("reply_has", []), expect.get("reply_lacks", [])
    problems += [f"reply lacks {t!r}" for t in has if t.casefold() not in reply]
    problems += [f"reply has {t!r}" for t in lacks if t.casefold() in reply]
    after = [(t["title"], t["completed"]) for t in await service.resources.store.list(user)]
    wanted = [_task(t) for t in expect.get("tasks", case.get("tasks", []))]
    if after != wanted:
        problems.append(f"tasks after: {after}, expected {wanted}")
    if problems:
        problems.append(f"reply: {result.reply[:300]!r}")
    return problems


async def evaluate(cases: list[dict[str, Any]], failures: bool) -> dict[str, list[int]]:
    """Run ``cases``; per category, [passed, total]. Failures are printed when asked for."""
    from keel.api.service import open_service
    from keel.graphs.settings import Settings
    from keel.tools.tasks.todo import TODO_TOOLS

    tally: dict[str, list[int]] = {}
    async with open_service(Settings(database_url="memory"), TODO_TOOLS) as service:
        for case in cases:
            problems = await run_case(service, case)
            row = tally.setdefault(str(case.get("category", "all")), [0, 0])
            row[0] += not problems
            row[1] += 1
            if problems and failures:
                shown = "\n  ".join(problems)
                typer.echo(f"FAIL {case.get('id')}: {case['message']!r}\n  {shown}")
    return tally


@nlu_app.command("eval")
def eval_command(
    path: Annotated[
        Path | None,
        typer.Argument(
            exists=True,
            dir_okay=False,
            help="JSON lines: turn cases, or labelled utterances (default: keel's held-back sets).",
        ),
    ] = None,
    failures: Annotated[bool, typer.Option(help="List the cases that failed.")] = False,
) -> None:
    """Score keel's understanding: labelled utterances per data set and category (understood,
    clean titles, untouched tasks), or turn cases run through the graph per category.
    """  # noqa: D205
    configure_logging("WARNING")
    lines = path.read_text(encoding="utf-8").splitlines() if path else []
    first = json.loads(lines[0]) if lines and lines[0].strip().startswith("{") else {}
    if path is None or "intent" in first:
        _score(path, failures)
        return
    cases = [_case(line, n) for n, line in enumerate(lines, start=1) if line.strip()]
    tally = asyncio.run(evaluate(cases, failures))
    for category, (passed, total) in sorted(tally.items()):
        typer.echo(f"{category:16} {passed:4}/{total:<4} {100 * passed / total:6.1f} %")
    passed = sum(p for p, _ in tally.values())
    total = sum(t for _, t in tally.values())
    typer.echo(f"{'all':16} {passed:4}/{total:<4} {100 * passed / max(1, total):6.1f} %")


@nlu_app.command("train")
def train_command(
    out: Annotated[
        Path | None, typer.Option(help="Folder to write the model to (default: the shipped one).")
    ] = None,
) -> None:
    """Make the learned understanding anew from its data and the todo tools' examples."""
    from keel.tools.tasks.todo import TODO_TOOLS
    from keel.tools.understanding.nlu import SHIPPED
    from keel.tools.understanding.nlu.training import train

    configure_logging("INFO")
    folder = train(TODO_TOOLS, out or SHIPPED)
    typer.echo(f"wrote {folder}")


def _score(path: Path | None, failures: bool) -> None:
    """Read labelled utterances (the held-back lines of keel's data sets when ``path`` is None)
    with the offline understanding; print per data set and category.
    """  # noqa: D205
    from keel.tools.tasks.todo import TODO_TOOLS
    from keel.tools.understanding.nlu.data import labelled
    from keel.tools.understanding.nlu.scoring import Tally, tallies

    samples = [s for s in labelled(TODO_TOOLS, [path] if path else None) if path or s.heldout]
    overall: dict[str, Tally] = {}
    for (dataset, category), tally in sorted(tallies(samples, TODO_TOOLS).items()):
        overall.setdefault(dataset, Tally()).add(tally)
        typer.echo(f"{dataset:10} {category:18} {_figures(tally)}")
        if failures:
            for failure in tally.failures:
                typer.echo(f"    {failure}")
    for dataset, tally in sorted(overall.items()):
        typer.echo(f"{dataset:10} {'all':18} {_figures(tally)}")
    typer.echo(f"{'all':10} {'all':18} {_figures(Tally().add_all(overall.values()))}")


def _share(part: int, whole: int) -> str:
    return f"{part:5}/{whole:<5} {100 * part / max(1, whole):5.1f} %"


def _figures(tally: Tally) -> str:
    text = _share(tally.understood, tally.total)
    if tally.titled:
        text += f"  titles clean {_share(tally.clean, tally.titled)}"
    if tally.dated:
        text += f"  dates {_share(tally.dates, tally.dated)}"
    if tally.listed:
        text += f"  lists {_share(tally.lists, tally.listed)}"
    if tally.placed:
        text += f"  places {_share(tally.places, tally.placed)}"
    if tally.talk:
        text += f"  untouched {_share(tally.untouched, tally.talk)}"
    return text
