"""The tools as a small model is shown them in one turn (``KEEL_TOOL_SCHEMAS=lean``).

A small model on a local server reads every token of its prompt on a CPU, and calls its tools
worse the more of them it is shown. A lean turn shows it:

- the tools it may need in any turn (those whose ``ToolSpec`` is not ``on_request``), each with
  its required arguments and those of no task field that it keeps for a small model
  (``ToolSpec.lean_args``: a page's ``offset``);
- a task field's argument (a list, a date, a place, a repeat) only when the person's recent
  messages have a word of its kind (``TaskField.mentioned``) or the offline understanding read
  one in the request: the same words without which a model's value is dropped (``unheard``);
- an ``on_request`` tool (moving, scheduling, repeating, clearing, one task's details, the lists)
  only when the offline understanding reads the request, or the mission an answer belongs to, as
  one for it, when a step of the plan waits for it, or, in a message the understanding reads no
  request in, when the person speaks of a field it takes ("make task 2 weekly"), with all its
  arguments;
- a developer's own tool (one without keel's ``ToolSpec``) always, as it is declared;
- never ``record_next_step``: a plan's steps are open in one round of a turn and done in the
  next, and a resume continues from the plan's steps without the note.

Each schema is compact: no titles, defaults or bounds, a nullable type as its type, the first
sentence of a description. The system prompt has the lines of the tools
shown. Most turns show the same tools, so the prompt starts the same from turn to turn and the
server's prompt cache keeps that start. Every tool stays bound: a call of one not shown still
runs.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from keel.checkpoints.task_fields import FIELD_NAMED, FIELDS
from keel.nodes.models.chat import DoneRule, system_prompt
from keel.tools.ask_user import ASK_TOOL
from keel.tools.next_step import NEXT_STEP_TOOL
from keel.tools.spec import NO_SPEC, spec_of
from keel.tools.understanding.reading import parse_intents

SHOWN_TOOLS = "shown_tools"
"""The keyword of a call's own tool schemas: keel's OpenAI model sends them in place of the bound
tools' (``keel.nodes.models.openai_chat``), and still reads a call written as text against every
bound tool."""

_NOT_SHOWN = (
    "title",
    "default",
    "maxLength",
    "minLength",
    "maximum",
    "minimum",
    "maxItems",
    "minItems",
)
"""What a lean schema leaves out of an argument: what the tool checks, or the model needs not."""


def _compact(node: Any) -> Any:
    """A JSON schema without what ``_NOT_SHOWN`` names (never a property of that name)."""
    if isinstance(node, list):
        return [_compact(n) for n in node]
    if not isinstance(node, dict):
        return node
    kinds = [k for k in node.get("anyOf", []) if k.get("type") != "null"]
    if len(kinds) == 1:  # "a string or null": a string, which the model may leave out
        node = {**kinds[0], **{k: v for k, v in node.items() if k != "anyOf"}}
    kept = {k: _compact(v) for k, v in node.items() if k not in _NOT_SHOWN or k == "properties"}
    if isinstance(node.get("properties"), dict):
        kept["properties"] = {name: _compact(p) for name, p in node["properties"].items()}
    return kept


def _first_sentence(text: str) -> str:
    """The first sentence of ``text``, its examples in brackets kept: without them, Qwen2.5 1.5B
    made one task of "add call mom and book the dentist" (a 0.5B model, with them, looked for
    "the milk one", find's example, when asked for the capital of France).
    """  # noqa: D205
    words = " ".join(text.split())
    end = re.search(r"[.!?](?:\s|$)", words)
    return words[: end.end()].strip() if end else words


def lean_schema(tool_: BaseTool, fields: frozenset[str]) -> dict[str, Any]:
    """``tool_``'s OpenAI schema, compact, with the task-field arguments in ``fields`` only."""
    function = convert_to_openai_tool(tool_)["function"]
    parameters = function.get("parameters", {})
    required = list(parameters.get("required", []))
    lean = spec_of(tool_).lean_args
    properties = {
        name: {
            k: v
            for k, v in _compact(arg).items()
            if k != "title" and (k != "description" or name in FIELD_NAMED)
        }
        for name, arg in parameters.get("properties", {}).items()
        if name in required
        or (name in fields if name in FIELD_NAMED else lean is None or name in lean)
    }
    shown: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        shown["required"] = required
    description = _first_sentence(function.get("description", ""))
    return {
        "type": "function",
        "function": {"name": function["name"], "description": description, "parameters": shown},
    }


@dataclass(frozen=True)
class Declared:
    """What one turn's model calls are given: the system prompt and the tools' schemas."""

    prompt: str
    schemas: list[dict[str, Any]]
    must_call: bool = False
    """The call must call a tool (``tool_choice`` "required")."""

    @property
    def names(self) -> list[str]:
        """The tools shown, in order."""
        return [s["function"]["name"] for s in self.schemas]


@dataclass
class Declaring:
    """Lean declarations of ``tools`` (the bound list: the todo tools, then keel's own two)."""

    tools: Sequence[BaseTool]
    done_rule: DoneRule = "in_prompt"
    _schemas: dict[tuple[str, frozenset[str] | None], dict[str, Any]] = field(default_factory=dict)

    def for_turn(self, said: str, *requests: str, planned: Collection[str] = ()) -> Declared:
        """The declarations for a turn whose ``requests`` are these (the message, and the
        mission it answers a question of), the person having said ``said`` (the turn's messages
        and the mission), with plan steps open for the tools ``planned``.
        """  # noqa: D205
        todo = [t for t in self.tools if t.name not in (NEXT_STEP_TOOL, ASK_TOOL)]
        intents = [i for r in dict.fromkeys(requests) if r.strip() for i in parse_intents(r, todo)]
        asked = {i.tool for i in intents} | set(planned)
        read = {name for i in intents for name in i.args if name in FIELD_NAMED}
        fields = frozenset({f.name for f in FIELDS if f.mentioned(said)} | read)
        every = frozenset(FIELD_NAMED)
        shown: list[tuple[BaseTool, frozenset[str] | None]] = []
        for tool_ in self.tools:
            spec = spec_of(tool_)
            if tool_.name == NEXT_STEP_TOOL:
                continue
            if spec is NO_SPEC:
                shown.append((tool_, None))  # a developer's own tool: as it is declared
            elif spec.on_request:
                takes = set(self._schema(tool_, every)["function"]["parameters"]["properties"])
                unread = not intents and bool(takes & fields)  # "make task 2 weekly": a repeat
                if tool_.name in asked or unread:
                    shown.append((tool_, every))
            else:
                shown.append((tool_, fields))
        prompt = system_prompt([t for t, _ in shown if t in todo], self.done_rule)
        return Declared(prompt, [self._schema(t, f) for t, f in shown])

    def _schema(self, tool_: BaseTool, fields: frozenset[str] | None) -> dict[str, Any]:
        key = (tool_.name, fields)
        if key not in self._schemas:
            made = convert_to_openai_tool(tool_) if fields is None else lean_schema(tool_, fields)
            self._schemas[key] = made
        return self._schemas[key]
