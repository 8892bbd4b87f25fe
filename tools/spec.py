"""What keel knows about a tool, declared beside its function with ``keel_tool``.

A keel tool is a LangChain tool whose metadata carries a ``ToolSpec``: whether it changes tasks
(each call id then runs once, ``keel.tools.ledger``), whether it asks the user first (the question
and the cancel wording), how people ask for it (the offline model's phrasings, which also make
the plan), how the offline model words its result, and its line in the system prompt. Everything
else is derived from the tool list: the agent's bound tools, MCP, the offline model's decision
table, the plan, the prompt and the docs' tool table. Adding a tool is one decorated function
added to one list (``keel.tools.tasks.todo.TODO_TOOLS``).

Phrasings are regular expressions matched against one request, whole and in any case, with two
placeholders: ``{task}`` (a task named by number, by what it is, or a selection such as "all the
completed ones": the argument ``task_id``) and ``{title}`` (the argument ``title``); any other
named group becomes the argument of that name, except ``more`` (a request for the next page of a
list), ``ask__WORD`` (a question about the result: ``ask__count``, how many) and ``ARG__VALUE``
(the argument ARG set to VALUE when the group matched: ``status__open``). Examples are plain
utterances with the same placeholders ("put {title} on my list", "get rid of {task}"): their
words match with a slip of spelling, around the politeness people add ("could you ... for me").
A request goes to the first tool in the list with a phrasing or example that matches it, so a
more specific tool comes before a more general one. Like every pattern keel matches against user
text, a phrasing must be linear in the length of the text: no nested or adjacent unbounded
quantifiers over the same characters.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import structlog
from langchain_core.tools import BaseTool, tool

from keel.checkpoints.task_fields import FIELD_NAMED
from keel.tools.confirm import Confirm

log = structlog.get_logger(__name__)

KEEL = "keel"
"""The key of a tool's ``ToolSpec`` in its LangChain metadata."""
TASK = r"(?:tasks?\s*)?#?(?P<ref>.+?)"
TITLE = r"(?P<title>.+)"
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_GROUP = re.compile(r"\(\?P<(\w+)>")


def _numbered(pattern: str) -> str:
    seen: dict[str, int] = {}

    def number(m: re.Match[str]) -> str:  # a task or a title named twice stays an error
        seen[m[1]] = seen.get(m[1], 0) + 1
        if seen[m[1]] == 1 or m[1] in ("ref", "title"):
            return m[0]
        return f"(?P<{m[1]}_{seen[m[1]]}>"

    return _GROUP.sub(number, pattern)


def group_name(name: str) -> str:
    """A group's name without the number ``patterns`` gave a second use of it."""
    return re.sub(r"_\d+$", "", name)


PLACES = {"task": "{task}", "title": "{title}", "list": r"(?P<list>[\w'-]+(?: [\w'-]+)?)"}
"""What a placeholder of an example matches; ``{list}`` names a list ("grocery"): one or two words
(a tool that takes no list is given none: ``keel.tools.understanding.nlu.settle``)."""


LEARNED_ONLY = re.compile(r"\{(?:due|when|late|place|urgent|every)\}")
"""The placeholders of words of when and of a place in a list: an example with one is learned
from, never matched as a phrasing (any last word would read as a date or a place)."""


def example_pattern(example: str) -> str:
    """An example utterance as a phrasing: its words literal (an apostrophe or a colon optional),
    a colon with any spaces around it, "my" and "the" either way, its placeholders as groups
    (``{task}``, ``{title}``, or any ``{name}`` for that argument).
    """  # noqa: D205
    parts: list[str] = []
    for i, piece in enumerate(_PLACEHOLDER.split(example.strip().lower())):
        if i % 2:
            parts.append(PLACES.get(piece, f"(?P<{piece}>.+?)"))
            continue
        literal = re.escape(piece).replace("'", "'?").replace(r"\ ", " ")
        literal = literal.replace(":", r"\s*(?::|\s[-\u2013\u2014])").replace(": ", r":\s*")
        parts.append(re.sub(r"\b(?:my|the)\b", "(?:my|the|our)", literal))
    return "^" + "".join(parts) + "$"


Reply = Callable[[dict[str, Any]], str]


def _worded(words: str | Reply | None, result: dict[str, Any], *, warn: bool = False) -> str | None:
    """``words`` (a function or a format string) over ``result``; None when none or they fail.

    With ``warn``, a failure is logged.
    """
    if words is None:
        return None
    try:
        return words(result) if callable(words) else words.format(**result)
    except Exception as exc:  # words that do not fit the result: the caller says something else
        if warn:
            log.warning("tool_reply_failed", error=type(exc).__name__)
        return None


@dataclass(frozen=True)
class ToolSpec:
    """Everything keel needs to know about a tool besides its function and schema."""

    mutates: bool = False
    """It changes tasks: each call id runs at most once."""
    confirm: Confirm | None = None
    """It needs a yes first."""
    phrasings: tuple[str, ...] = ()
    """How people ask for it (see the module docstring)."""
    reply: str | Reply | None = None
    """The offline model's report of its result: a format string over the result, or a function."""
    prompt: str | None = None
    """Its line in the system prompt, if it needs one."""
    example: str | None = None
    """What the offline model's help says it can do, with an example: 'add a task ("Add milk")'."""
    examples: tuple[str, ...] = ()
    """More ways people ask for it, as plain utterances (see the module docstring)."""
    told_done: bool = False
    """Someone saying they did a task ("I called mom") asks for this tool on it."""
    said: str | Reply | None = None
    """What it did, as one short sentence over its result ("Created task {id}: {title}")."""
    intent: str | None = None
    """The intent public training data names for it ("create"): the learned understanding
    (``keel.tools.understanding.nlu``) learns the tool from those utterances as well as from its
    examples."""
    heard: tuple[str, ...] = ()
    """Optional arguments (task fields: ``keel.checkpoints.task_fields.FIELDS``) a model's call
    keeps only when the person's message says something of them: a list or a date a small model
    made up for "add buy milk" is dropped before the call runs (``unheard``)."""
    step: str | None = None
    """How a plan names a request for it: a format over the request's arguments and ``task``, the
    task it names ('Delete {task}' reads 'Delete task 3' or 'Delete rice')."""
    on_request: bool = False
    """A small model is shown it only in a turn whose request the offline understanding reads as
    one for it (``keel.nodes.models.declared``); the others it is always shown."""
    lean_args: tuple[str, ...] | None = None
    """The optional arguments other than task fields that a small model is shown (None: all):
    what another tool does better, or a default does well, left out."""

    def sentence(self, name: str, result: Any) -> str | None:
        """What the call did in a short sentence for people; None when it did nothing to tell
        (the user said no to it). An error is told in its own words.
        """  # noqa: D205
        if isinstance(result, str):
            return None if result.startswith("Cancelled:") else result
        said = _worded(self.said, result) if isinstance(result, dict) else None
        return said if said is not None else f"Ran {name.replace('_', ' ')}"

    def step_for(self, ref: str | None, args: dict[str, Any], asked: str) -> str:
        """The plan's words for a request of this tool naming ``ref`` with ``args``; the words
        that ``asked`` for it when the tool declares none (or they do not fit).
        """  # noqa: D205
        task = f"task {ref}" if ref and ref.isdigit() else ref or "a task"
        return _worded(self.step, {**args, "task": task}) or asked

    def patterns(self) -> list[str]:
        """The phrasings, then the examples (but those with words of when: ``LEARNED_ONLY``),
        with their placeholders filled in. A group name used twice in one phrasing
        (``status__open`` in two alternatives) is numbered from its second use on
        (``status__open_2``), as regular expressions need.
        """  # noqa: D205
        literal = [e for e in self.examples if not LEARNED_ONLY.search(e)]
        every = [*self.phrasings, *(example_pattern(e) for e in literal)]
        return [_numbered(p.replace("{task}", TASK).replace("{title}", TITLE)) for p in every]

    def report(self, result: dict[str, Any]) -> str | None:
        """The offline model's words for ``result``, or None when it has none (or they fail)."""
        return _worded(self.reply, result, warn=True)


def keel_tool(
    *,
    mutates: bool = False,
    confirm: Confirm | None = None,
    phrasings: Sequence[str] = (),
    reply: str | Reply | None = None,
    prompt: str | None = None,
    example: str | None = None,
    examples: Sequence[str] = (),
    told_done: bool = False,
    description: str | None = None,
    said: str | Reply | None = None,
    intent: str | None = None,
    step: str | None = None,
    heard: Sequence[str] = (),
    on_request: bool = False,
    lean_args: Sequence[str] | None = None,
) -> Callable[[Callable[..., Any]], BaseTool]:
    """Declare a keel tool: ``@keel_tool(...)`` over an async function taking ``user_id`` and
    ``store`` (injected, hidden from the model) and the model's arguments.

    The function's docstring (or ``description``) is what the model and MCP clients read.
    """  # noqa: D205
    for pattern in ToolSpec(phrasings=tuple(phrasings), examples=tuple(examples)).patterns():
        re.compile(pattern)  # a phrasing that is no regular expression fails here, not in a turn

    def declare(fn: Callable[..., Any]) -> BaseTool:
        made = tool(fn, description=description) if description else tool(fn)
        spec = ToolSpec(
            mutates,
            confirm,
            tuple(phrasings),
            reply,
            prompt,
            example,
            tuple(examples),
            told_done,
            said,
            intent,
            tuple(heard),
            step,
            on_request,
            tuple(lean_args) if lean_args is not None else None,
        )
        made.metadata = {**(made.metadata or {}), KEEL: spec}
        return made

    return declare


NO_SPEC = ToolSpec()


def spec_of(tool_: BaseTool | Any) -> ToolSpec:
    """The ``ToolSpec`` of a tool (an empty one for a tool keel did not declare)."""
    metadata = getattr(tool_, "metadata", None) or {}
    spec = metadata.get(KEEL)
    return spec if isinstance(spec, ToolSpec) else NO_SPEC


class Named(Protocol):
    """A tool, or what is read of one: it has a name."""

    @property
    def name(self) -> str:
        """The tool's name."""
        ...


N = TypeVar("N", bound=Named)


def tool_named(tools: Sequence[N], name: str) -> N | None:
    """The tool called ``name`` among ``tools``, if there is one."""
    return next((t for t in tools if t.name == name), None)


def tool_sentence(tools: Sequence[BaseTool], name: str, result: Any) -> str | None:
    """What the tool ``name`` did, in the short sentence its declaration gives (see ToolSpec)."""
    return spec_of(tool_named(tools, name)).sentence(name, result)


def confirmations(tools: Sequence[BaseTool]) -> dict[str, Confirm]:
    """The tools that need a yes first, by name, with their question and cancel wording."""
    return {t.name: c for t in tools if (c := spec_of(t).confirm) is not None}


def tool_table(tools: Sequence[BaseTool]) -> str:
    """The tools as the docs list them (a Markdown table), made from their declarations."""
    rows = [
        "| tool | what it does | changes tasks | asks first | the offline model understands |",
        "|---|---|---|---|---|",
    ]
    for t in tools:
        spec = spec_of(t)
        what = (t.description or "").split("\n")[0].split(". ")[0].rstrip(".")
        asks = f'yes: "{spec.confirm.question({spec.confirm.target: "N"})}"' if spec.confirm else ""
        mutates = "yes" if spec.mutates else ""
        rows.append(f"| `{t.name}` | {what} | {mutates} | {asks} | {spec.example or ''} |")
    return "\n".join(rows) + "\n"


TABLE_START = "<!-- tools: made by `make docs` from the tools' declarations -->\n"
TABLE_END = "<!-- /tools -->"


def with_tool_table(markdown: str, tools: Sequence[BaseTool]) -> str:
    """``markdown`` with the table between its tool-table markers made anew from ``tools``."""
    start = markdown.index(TABLE_START) + len(TABLE_START)
    end = markdown.index(TABLE_END, start)
    return markdown[:start] + tool_table(tools) + markdown[end:]


def unheard(tool_: BaseTool | Any, args: dict[str, Any], message: str) -> list[str]:
    """The arguments of a call of ``tool_`` that its spec wants heard (``ToolSpec.heard``) and
    ``message``, the person's, says nothing of.
    """  # noqa: D205
    return [
        name
        for name in spec_of(tool_).heard
        if isinstance(value := args.get(name), str)
        and value.strip()
        and not FIELD_NAMED[name].said(message, value)
    ]
