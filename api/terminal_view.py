"""What ``keel chat`` shows of a turn: its reply, what its tools did, its events with
``--verbose``, and where the conversation stands (``/state``).
"""  # noqa: D205

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console
from rich.markup import escape

from keel.graphs.result import Snapshot, TurnResult
from keel.nodes.event_types import Event


def describe_event(event: Event) -> str:
    """One line a person can read for an event (shown with ``--verbose``)."""
    if event["type"] == "state_updated" and event["data"]["mission_reset"]:
        if event["data"]["reason"] == "user_requested":
            return "Mission reset (requested)"
        if event["data"]["reason"] == "unfinished_turn_abandoned":
            return "Starting new query (previous task left unfinished)"
        return "Starting new query (previous task completed)"
    if event["type"] == "topic_changed":
        back = event["data"]["reason"] == "returned"
        return f"{'Back to the topic' if back else 'New topic'}: {event['data']['title']}"
    if event["type"] == "tool_call":
        return event["data"].get("text") or ""
    if event["type"] == "loop_limit":
        return f"Loop limit reached after {event['data']['loops']} rounds"
    if event["type"] == "resumed":
        return f"Starting new session from step {event['data']['step']}"
    if event["type"] == "model_fallback":
        return f"Model failed ({event['data']['reason']}): the offline assistant took over"
    if event["type"] == "turn_timed_out":
        return f"Out of time after {event['data']['seconds']} s"
    return f"{event['type']}: {event['data']}"


def print_events(console: Console, events: Iterable[Event], verbose: bool) -> None:
    """What the tools did, always; the other events with ``verbose``."""
    for event in events:
        if event["type"] != "tool_call" and not verbose:
            continue
        if text := describe_event(event):
            console.print(f"[dim]· {escape(text)}[/dim]")


def print_state(console: Console, state: Snapshot) -> None:
    """Where the conversation stands (``/state``)."""
    console.print(f"agent_state: {state['agent_state']}   complete: {state['complete']}")
    console.print(f"mission: {escape(str(state['mission']))}")
    todolist = state.get("todolist")
    if todolist:
        console.print(f"todolist {todolist['id']}:")
        for item in todolist["items"]:
            console.print(escape(f"  {item['id']}. [{item['status']}] {item['description']}"))
    else:
        console.print("todolist: none")
    waiting = state.get("pending_confirmation")
    console.print(f"pending confirmation: {escape(waiting['prompt']) if waiting else 'none'}")


def print_result(console: Console, result: TurnResult, verbose: bool) -> None:
    """A turn's reply, after the one of a turn a crash cut off (and its events with ``verbose``)."""
    if result.recovered_reply:
        console.print("[dim]· Finished the turn that was cut off last time:[/dim]")
        console.print(f"[bold cyan]keel>[/bold cyan] {escape(result.recovered_reply)}")
    print_events(console, result.events, verbose)
    console.print(f"[bold cyan]keel>[/bold cyan] {escape(result.reply)}")
