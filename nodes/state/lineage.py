"""A turn's place in the conversation's lineage: its key, its branch of the log, what it reads.

Names of what a turn writes (its logged messages, its topic, its tool calls in the ledger) follow
the line of checkpoints the turn starts from, never a counter a fork repeats: the user_input node
gives each turn a key, its number and a digest of the previous turn's key, the message and the
message's idempotency key. A node re-run after a crash, or a turn run again from the same
checkpoint with the same message, gets the same key, so it writes nothing twice and runs no tool
twice; a turn forked from an earlier checkpoint with another message gets a new one.

The state's ``branch`` says where the turns sit in the message log (``keel.checkpoints.branches``):
the log moves a forked turn to a branch named after its key when the turn's first rows are
written, and the node that wrote them records the new branch (``logged``). Readers of the log (the
context builder, topic detection, the API) take the rows of ``lineage(state)``.
"""

from __future__ import annotations

import hashlib
from typing import Any

from keel.checkpoints.branches import MAIN, Lineage, Segment, TurnPlace
from keel.nodes.state.schema import Branch, KeelState

DIGEST_CHARS = 16


def next_turn_key(state: KeelState, turn: int, content: str, request_key: str | None) -> str:
    """The key of turn number ``turn`` started with ``content`` from ``state``."""
    parts = (state.get("turn_key") or "", str(turn), content, request_key or "")
    digest = hashlib.sha256("\0".join(parts).encode("utf-8", "surrogatepass")).hexdigest()
    return f"turn-{turn}-{digest[:DIGEST_CHARS]}"


def turn_number(state: KeelState) -> int:
    """The current (or last) turn's number."""
    return (state.get("stats") or {}).get("turns", 0)


def turn_key(state: KeelState) -> str:
    """The current turn's key (a turn started before keys followed the lineage: its number)."""
    return state.get("turn_key") or f"turn-{turn_number(state)}"


def branch_of(state: KeelState) -> Branch:
    """The state's branch; a conversation that has none yet is on the main branch."""
    return state.get("branch") or {"id": MAIN, "tip": None, "shares": []}


def starting(state: KeelState, turn: int) -> KeelState:
    """The branch update of a turn that starts: a state that has none (a conversation's first
    turn, or one from before branches) is on the main branch, after the turns it counted.
    """  # noqa: D205
    if state.get("branch"):
        return {}
    return {"branch": {"id": MAIN, "tip": turn - 1, "shares": []}}


def lineage(state: KeelState) -> Lineage:
    """The log rows this line of turns has written: what its readers may see."""
    branch = branch_of(state)
    shared = tuple(Segment(s["branch"], s["upto"]) for s in branch["shares"])
    return Lineage((Segment(branch["id"], branch["tip"]), *shared))


def place(state: KeelState) -> TurnPlace:
    """Where the current turn's rows are written, and the branch it opens if it is a fork."""
    return TurnPlace(branch_of(state)["id"], turn_number(state), turn_key(state))


def logged(state: KeelState, written_to: str) -> dict[str, Any]:
    """The state update after the current turn's rows went to branch ``written_to``.

    The branch's tip moves to this turn; a turn the log moved to a new branch (a fork) records
    the branch it came from and the turns of it that it shares.
    """
    branch, turn = branch_of(state), turn_number(state)
    if written_to == branch["id"]:
        if branch["tip"] == turn:
            return {}
        return {"branch": {**branch, "tip": turn}}
    upto = branch["tip"] if branch["tip"] is not None else turn - 1
    shares = [{"branch": branch["id"], "upto": upto}, *branch["shares"]]
    return {"branch": {"id": written_to, "tip": turn, "shares": shares}}
