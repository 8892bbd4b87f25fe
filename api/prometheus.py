"""What an operator reads at /metrics, in Prometheus's text format (``prometheus_client``).

Counted where the service sees it: each turn's outcome and duration, and what the turn's events
say (tool calls by tool and outcome, confirmations, mission resets and topic changes by reason,
resumes, loop-limit ends, model fallbacks by reason, turns out of time); requests refused with
409 or 503; the wait for a conversation's turn lock; the PostgreSQL pool's connections and waiting
requests. How often people reset and how often
topics change, the measures the systems keel descends from watched, are the ``reason`` labels of
``keel_mission_resets_total`` and ``keel_topic_changes_total``.

``keel serve --workers N`` gives the workers one directory to count in
(``PROMETHEUS_MULTIPROC_DIR``), so any worker's /metrics answers for all of them;
``retire_dead_workers`` drops the gauges of a worker that is gone, so the pool's figures are those
of live workers only (``keel.api.serving`` calls it when a worker exits, a worker when it starts).
"""

from __future__ import annotations

import os
import re
from collections.abc import Container, Iterable, Sequence
from typing import Any

from langchain_core.tools import BaseTool
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)

from keel.api.serving import is_alive
from keel.graphs.result import TurnResult
from keel.nodes.event_types import Event
from keel.tools.spec import confirmations

SECONDS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)

TURNS = Counter("keel_turns", "Turns answered, by outcome.", ["outcome"])
TURN_SECONDS = Histogram(
    "keel_turn_seconds", "How long a turn took, by outcome.", ["outcome"], buckets=SECONDS
)
REFUSED = Counter(
    "keel_requests_refused", "Requests answered 409 or 503, by status and code.", ["status", "code"]
)
LOCK_WAIT = Histogram(
    "keel_turn_lock_wait_seconds", "Waits for a conversation's turn lock.", buckets=SECONDS
)
TOOL_CALLS = Counter("keel_tool_calls", "Tool calls, by tool and outcome.", ["tool", "outcome"])
CONFIRMATIONS = Counter(
    "keel_confirmations", "Confirmations asked, confirmed and cancelled.", ["step"]
)
MISSION_RESETS = Counter("keel_mission_resets", "Missions reset, by reason.", ["reason"])
TOPIC_CHANGES = Counter("keel_topic_changes", "Topics changed, by reason.", ["reason"])
RESUMES = Counter("keel_resumes", "Fresh context windows opened after exhaustion.")
LOOP_LIMITS = Counter("keel_loop_limit_ends", "Turns ended by the loop limit.")
REMINDERS = Counter(
    "keel_reminders", "Reminders by outcome: delivered, late, dropped, failed.", ["outcome"]
)
FALLBACKS = Counter(
    "keel_model_fallbacks",
    "Model answers (step answer) and plans (step plan) the offline model gave instead, by reason.",
    ["reason", "step"],
)
TIMED_OUT = Counter("keel_turn_timeouts", "Turns ended by their time budget.")
POOL = Gauge(
    "keel_db_pool",
    "The PostgreSQL pool: connections open and in use, requests waiting for one.",
    ["measure"],
    multiprocess_mode="livesum",
)
POOL_MEASURES = {
    "pool_size": "connections",
    "pool_available": "available",
    "requests_waiting": "waiting",
}


def outcome_of(result: TurnResult) -> str:
    """What a turn came to: replayed, stopped, awaiting_confirmation, complete or incomplete."""
    if result.replayed:
        return "replayed"
    if any(e["type"] == "turn_stopped" for e in result.events):
        return "stopped"
    if result.awaiting_confirmation is not None:
        return "awaiting_confirmation"
    return "complete" if result.complete else "incomplete"


def _tool_outcome(name: str, result: Any, asking: Container[str]) -> str:
    text = result if isinstance(result, str) else ""
    if text.startswith("Cancelled"):
        return "cancelled"
    if text.startswith(("Error", "Not run")):
        return "error"
    return "confirmed" if name in asking else "ok"


def count_events(events: Iterable[Event], tools: Sequence[BaseTool] = ()) -> None:
    """Count what a turn's (or a reset's) events say (``tools``: the run's, for confirmations)."""
    asking = confirmations(tools)
    for event in events:
        if event["type"] == "tool_call":
            call = event["data"]
            outcome = _tool_outcome(call["name"], call["result"], asking)
            TOOL_CALLS.labels(call["name"], outcome).inc()
            if outcome in ("confirmed", "cancelled"):
                CONFIRMATIONS.labels(outcome).inc()
        elif event["type"] == "topic_changed":
            TOPIC_CHANGES.labels(event["data"]["reason"] or "unknown").inc()
        elif event["type"] == "state_updated" and event["data"]["mission_reset"]:
            MISSION_RESETS.labels(event["data"]["reason"] or "unknown").inc()
        elif event["type"] == "resumed":
            RESUMES.inc()
        elif event["type"] == "loop_limit":
            LOOP_LIMITS.inc()
        elif event["type"] == "model_fallback":
            FALLBACKS.labels(event["data"]["reason"], event["data"]["step"]).inc()
        elif event["type"] == "turn_timed_out":
            TIMED_OUT.inc()


def count_turn(result: TurnResult | None, seconds: float, tools: Sequence[BaseTool] = ()) -> None:
    """Count one turn (``None``: it failed) run with ``tools``."""
    outcome = "failed" if result is None else outcome_of(result)
    TURNS.labels(outcome).inc()
    TURN_SECONDS.labels(outcome).observe(seconds)
    if result is None or result.replayed:
        return
    count_events(result.events, tools)
    if result.awaiting_confirmation is not None:
        CONFIRMATIONS.labels("asked").inc()


def count_pool(stats: dict[str, int]) -> None:
    """Note the pool's state (``AsyncConnectionPool.get_stats()``)."""
    for key, measure in POOL_MEASURES.items():
        POOL.labels(measure).set(stats.get(key, 0))


def exposition(multiprocess_dir: str | None) -> tuple[bytes, str]:
    """Every metric of this server (all its workers), and the content type to send it with.

    ``multiprocess_dir`` is where the workers count together (the setting ``metrics_dir``).
    """
    registry = REGISTRY
    if multiprocess_dir:
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    return generate_latest(registry), CONTENT_TYPE_LATEST


_COUNTING_FILE = re.compile(r"\w+_(\d+)\.db")
"""A file prometheus-client counts one process's metrics in: ``<kind>_<pid>.db``."""


def retire_dead_workers(multiprocess_dir: str) -> list[int]:
    """Drop the live gauges of every process that counted in ``multiprocess_dir`` and is gone.

    Its counters and histograms stay: what it counted happened. Returns the pids retired.
    """
    try:
        names = os.listdir(multiprocess_dir)
    except FileNotFoundError:
        return []
    pids = {int(m.group(1)) for name in names if (m := _COUNTING_FILE.fullmatch(name))}
    dead = sorted(pid for pid in pids if not is_alive(pid))
    for pid in dead:
        multiprocess.mark_process_dead(pid, multiprocess_dir)
    return dead
