"""The next-step note: where to pick up when a fresh context window is opened.

The model records it with the ``record_next_step`` tool (bound beside the todo tools, handled by
the tool_execution node without touching any store). ``parse_next_step`` reads the formats notes
come in: ``# Step 5: Implement auth``, ``## Step 5`` followed by the description line, and
``5. Implement auth``.
"""

from __future__ import annotations

import re

from langchain_core.tools import tool
from typing_extensions import TypedDict


class NextStep(TypedDict):
    """The next-step note: where to pick up after a fresh context window."""

    step: int
    description: str


_HEADING = re.compile(r"^\s*#*\s*step\s+(\d+)\s*[:.\-–]?\s*(.*)$", re.I)
_NUMBERED = re.compile(r"^\s*(\d+)[.)]\s+(.+)$")


def parse_next_step(note: str) -> NextStep | None:
    """The step number and description of a note, or None when it names no step."""
    lines = [line.strip() for line in note.strip().splitlines() if line.strip()]
    for i, line in enumerate(lines):
        match = _HEADING.match(line) or _NUMBERED.match(line)
        if not match:
            continue
        description = match.group(2).strip()
        if not description:
            rest = [x for x in lines[i + 1 :] if not x.startswith("#")]
            description = rest[0] if rest else "Continue workflow"
        return {"step": int(match.group(1)), "description": description}
    return None


@tool
def record_next_step(description: str, step: int | None = None) -> str:
    """Record where to continue if the conversation must resume in a fresh context.

    Give the step number and what it is; a markdown note such as "## Step 3: Add eggs" works too.
    """
    return description  # run by the tool_execution node, which keeps the note in state


NEXT_STEP_TOOL = record_next_step.name


def note_from_args(args: dict[str, object]) -> NextStep | None:
    """The note the model recorded, from the tool call's arguments."""
    description = str(args.get("description") or "").strip()
    step = args.get("step")
    if isinstance(step, int) and not isinstance(step, bool) and step > 0:
        parsed = parse_next_step(description)
        text = parsed["description"] if parsed else description
        return {"step": step, "description": text or "Continue workflow"}
    return parse_next_step(description)
