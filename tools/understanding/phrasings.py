"""The decision table: the tools' phrasings and examples compiled, and one request matched.

``table_of(specs)`` compiles every phrasing and example of the tools (``keel.tools.spec``) in the
tools' order, with the words they are written in (a misspelt one is put right before matching,
``keel.tools.understanding.words.correct``). ``match(text, table)`` maps one request to an
``Intent``: the tool, its arguments, and the task it names (a number, words to look the task up by,
or a selection such as "all the completed ones"). What a whole message asks is
``keel.tools.understanding.reading``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from langchain_core.tools import BaseTool

from keel.tools.spec import TASK, ToolSpec, group_name, spec_of
from keel.tools.understanding.words import Corrected, correct

Selection = Literal["all", "open", "done"]
_ALL = re.compile(
    r"^(?:(?:all|every|each)(?: of)?(?: (?:my|the|them|it|these|those|your))?(?: (?:tasks?|todos?"
    r"|items?|things?|entries|stuff|one|ones|to-dos))?|everything(?: on (?:my|the) list)?"
    r"|them all|(?:the|my) (?:whole|entire|full) (?:todo |to-do )?list|(?:my|the) (?:todo )?list"
    r"|(?:the )?(?:whole )?lot|(?:my|the) tasks|(?:whole |entire |full )?(?:todo |to-do )?list)$"
)
_DONE = re.compile(
    r"^(?:all |everything |every |each )?(?:the |my |of the |of my )?(?:completed|done|finished"
    r"|checked(?: off)?"
    r"|ticked(?: off)?|complete)(?: ones| tasks| items| todos| ones? too)?$"
    r"|^(?:everything|all|the ones|the tasks|tasks) (?:that'?s |that are |i'?ve |already )?"
    r"(?:done|completed|finished)$"
)
_OPEN = re.compile(
    r"^(?:all |everything |every |each )?(?:the |my |of the |of my )?(?:open|remaining|unfinished"
    r"|incomplete"
    r"|pending|outstanding|undone|not done|uncompleted|rest(?: of (?:them|my tasks|the list))?)"
    r"(?: ones| tasks| items| todos)?$|^(?:everything|all) (?:else|left|remaining)$"
)

_SELECTIONS: tuple[tuple[Selection, re.Pattern[str]], ...] = (
    ("all", _ALL),
    ("done", _DONE),
    ("open", _OPEN),
)


PRONOUNS = frozenset(
    {"it", "that", "this", "them", "those", "these", "that one", "this one", "both", "both of them"}
)
"""Words that name the task just talked about rather than a title."""


DIGITS_MAX = 100
"""A task number longer than this names no task (and is never made an integer)."""


@dataclass(frozen=True)
class Intent:
    """One recognised request: a tool and what it needs."""

    tool: str
    text: str
    """The words that asked for it."""
    ref: str | None = None
    """The task named: digits for an id, else words to look it up by, or a selection."""
    args: dict[str, Any] = field(default_factory=dict)
    more: bool = False
    """A list request for the page after the one shown last ("show more tasks")."""
    asked: str | None = None
    """A question about the result rather than the result itself (``count``: how many)."""
    reported: bool = False
    """Read from a report of a deed ("I called mom"), not from a phrasing the tool declares."""
    listed_in: str | None = None
    """For one item of a list ("add eggs, milk and rice to the grocery list"), the words of the
    whole request: the items share what it says of them (the list, the date)."""

    @property
    def task_id(self) -> int | None:
        """The task id when the request named one by number (None past ``DIGITS_MAX`` digits)."""
        ref = self.ref
        return int(ref) if ref is not None and ref.isdigit() and len(ref) <= DIGITS_MAX else None

    @property
    def select(self) -> Selection | None:
        """The request names a selection of tasks: all of them, the open or the completed ones."""
        if self.ref is None or self.task_id is not None:
            return None
        ref = self.ref.casefold()
        return next((name for name, pattern in _SELECTIONS if pattern.match(ref)), None)

    @property
    def place(self) -> tuple[str, int] | None:
        """The request names tasks by their place in the list shown: ("nth", 2) for the second,
        ("last", 1) for the last one, ("first", 2) for the first two.
        """  # noqa: D205
        m = PLACE_REF.match(self.ref or "")
        if m is None:
            return None
        return ("nth", int(m["nth"])) if m["nth"] else (m["end"], int(m["count"]))

    @property
    def refers_back(self) -> bool:
        """The request names its task by a word for the one just talked about ("it", "that")."""
        return self.ref is not None and self.ref.casefold() in PRONOUNS

    @property
    def needs_lookup(self) -> bool:
        """The request names a task by what it is (or a selection), so ids must be found first."""
        return self.ref is not None and not self.ref.isdigit()

    def with_ref(self, ref: str) -> Intent:
        """The same request for another task (one item of a list)."""
        return replace(self, ref=clean_ref(ref))

    def with_args(self, **args: Any) -> Intent:
        """The same request with other arguments (one item of a list of titles)."""
        return replace(self, args={**self.args, **args})


@dataclass(frozen=True)
class Table:
    """The tools' phrasings compiled, in order, with the words they use."""

    rows: tuple[tuple[str, re.Pattern[str]], ...]
    vocabulary: frozenset[str]
    """The words of the phrasings: a word one slip away from one of these is taken for it."""
    told_done: str | None
    """The tool a report of a done task asks for ("I called mom")."""
    word_first: int
    """How many rows start with a word: the rest start with the task they name."""
    at_once: frozenset[str]
    """The tools that change tasks without asking first (create, complete)."""


def specs_of(tools: Sequence[BaseTool | Any]) -> tuple[tuple[str, ToolSpec], ...]:
    """The (name, spec) pairs of ``tools``, the decision table's key."""
    return tuple((t.name, spec_of(t)) for t in tools if hasattr(t, "name"))


_LITERAL = re.compile(r"(?<![?\\<])\b[a-z]{3,}\b(?!')")


@functools.cache
def table_of(specs: tuple[tuple[str, ToolSpec], ...]) -> Table:
    """The decision table of ``specs`` (tool name, spec): every phrasing compiled, in order.

    A phrasing that starts with the task it names ("{task} is done") comes after every phrasing
    that starts with a word, whatever its tool: it would take any request ending its way.
    """
    every = [(name, re.compile(p, re.I)) for name, spec in specs for p in spec.patterns()]
    rows = tuple(sorted(every, key=_task_first))
    word_first = sum(1 for row in rows if not _task_first(row))
    words = {w for _, p in rows for w in _LITERAL.findall(_without_groups(p.pattern))}
    told = next((name for name, spec in specs if spec.told_done), None)
    at_once = frozenset(name for name, spec in specs if spec.mutates and spec.confirm is None)
    return Table(rows, frozenset(words), told, word_first, at_once)


def _task_first(row: tuple[str, re.Pattern[str]]) -> bool:
    return row[1].pattern.startswith(f"^{TASK}")


def _without_groups(pattern: str) -> str:
    return re.sub(r"\(\?P<\w+>", "(", pattern)


_REF_HEAD = re.compile(
    r"^(?:the |my |that |this )?(?:tasks? |items? |todos? |numbers? |no\.? )?#?", re.I
)
_REF_TAIL = re.compile(
    r"\s+(?:as (?:done|complete|completed|finished|well)|too|also|now|please|pls|then|instead"
    r"|for me|thanks|straight away|right away)$",
    re.I,
)
"""Words after a task that say no more about which ("mark 2 and 3 as completed", "#2 too")."""
REF_TAIL_CHARS = 40
NUMBER_WORDS = {
    w: str(n)
    for n, ws in enumerate(
        [(), ("one", "first", "1st"), ("two", "second", "2nd"), ("three", "third", "3rd"),
         ("four", "fourth", "4th"), ("five", "fifth", "5th"), ("six", "sixth", "6th"),
         ("seven", "seventh", "7th"), ("eight", "eighth", "8th"), ("nine", "ninth", "9th"),
         ("ten", "tenth", "10th"), ("eleven", "eleventh", "11th"), ("twelve", "twelfth", "12th")]
    )
    for w in ws
}  # fmt: skip
"""A task named by a number in words or by its place ("task two", "the second one")."""


ORDINALS = {
    w: n
    for n, ws in enumerate(
        [(), ("first", "1st"), ("second", "2nd"), ("third", "3rd"), ("fourth", "4th"),
         ("fifth", "5th"), ("sixth", "6th"), ("seventh", "7th"), ("eighth", "8th"),
         ("ninth", "9th"), ("tenth", "10th"), ("eleventh", "11th"), ("twelfth", "12th")]
    )
    for w in ws
}  # fmt: skip
"""A place in a list, in words ("the second one")."""
_PLACE_REF = re.compile(
    r"^(?:the )?(?:(?P<nth>\w+)|(?P<end>first|last|top|bottom) (?P<count>\w+))"
    r"(?: (?:one|ones|task|tasks|item|items|row|rows|line|lines|entry|entries|thing|things))?"
    r"(?: (?:listed|shown|on (?:the|my) list|in (?:the|my) list|from the top))?$",
    re.I,
)
PLACE_REF = re.compile(
    r"^(?:(?P<nth>\d{1,4})(?:st|nd|rd|th)|(?P<end>first|last) (?P<count>\d{1,3}))$"
)
"""A task named by its place in the list shown, as ``clean_ref`` gives it: "2nd", "last 1",
"first 2"."""


def _place_ref(ref: str) -> str | None:
    """``ref`` as a place in a list ("2nd", "last 1", "first 2"), when it names one."""
    m = _PLACE_REF.match(ref.strip())
    if m is None:
        return None
    if m["nth"] is not None:
        word = m["nth"].casefold()
        if word in ("last", "bottom"):
            return "last 1"
        if word == "top":
            return "1st"
        n = ORDINALS.get(word)
        return (
            None
            if n is None
            else f"{n}{'st' if n == 1 else 'nd' if n == 2 else 'rd' if n == 3 else 'th'}"
        )
    count = NUMBER_WORDS.get(m["count"].casefold(), m["count"])
    if not count.isdigit():
        return None
    end = "first" if m["end"].casefold() in ("first", "top") else "last"
    return f"{end} {int(count)}"


def clean_ref(ref: str) -> str:
    """A task reference without the words around it: "the milk one" -> "milk", "#3" -> "3"."""
    ref = ref.strip().strip("'\"").strip()
    if ref.casefold() in PRONOUNS:
        return ref.casefold()
    if (place := _place_ref(ref)) is not None:
        return place
    ref = _REF_HEAD.sub("", ref)
    for _ in range(4):  # "2 as well too": each word off the end, looked for in the last few only
        head, tail = ref[:-REF_TAIL_CHARS], ref[-REF_TAIL_CHARS:]
        if (cut := _REF_TAIL.sub("", tail)) == tail:
            break
        ref = head + cut
    ref = re.sub(r"'s$", "", ref)
    ref = re.sub(
        r"\s+(?:one|ones|task|tasks|item|items|thing|things|entry|todo|"
        r"(?:from|off|on) (?:my |the )?(?:todo )?list)$",
        "",
        ref,
        flags=re.I,
    )
    ref = ref.strip("'\" ")
    return NUMBER_WORDS.get(ref.casefold(), ref)


WORDS_CORRECTED = 4
"""Words at each end of a request that a slip is looked for in (command words stand there)."""


def _corrected(text: str, table: Table) -> Corrected:
    """``text`` with slips of the table's words put right at its ends."""
    cut = [m.start() for m in re.finditer(r" ", text)]
    if len(cut) < 2 * WORDS_CORRECTED:
        return correct(text, table.vocabulary)
    head_end, tail_start = cut[WORDS_CORRECTED - 1], cut[-WORDS_CORRECTED]
    head = correct(text[:head_end], table.vocabulary)
    tail = correct(text[tail_start:], table.vocabulary)
    middle = text[head_end:tail_start]
    origin = (
        head.origin[:-1]
        + tuple(range(head_end, tail_start))
        + tuple(tail_start + o for o in tail.origin)
    )
    return Corrected(head.text + middle + tail.text, origin)


def match(text: str, table: Table, task_first: bool = True) -> Intent | None:
    """The request ``text`` makes by the first phrasing that matches it whole, if any.

    Without ``task_first``, phrasings that start with the task ("3 is done") are not tried: in a
    list, such a piece may be the last item of the request before it ("mark 2 and 3 as done").
    """
    fixed = _corrected(text, table)
    for tool, pattern in table.rows if task_first else table.rows[: table.word_first]:
        m = pattern.match(fixed.text)
        if m and (intent := _intent(tool, text, m, fixed)) is not None:
            return intent
    return None


def _intent(tool: str, text: str, m: re.Match[str], fixed: Corrected) -> Intent | None:
    ref: str | None = None
    args: dict[str, Any] = {}
    asked = None
    for numbered, value in m.groupdict().items():
        if value is None:
            continue
        name = group_name(numbered)
        start, end = fixed.span(*m.span(name))
        original = text[start:end].strip()
        if name == "ref":
            ref = clean_ref(original) or None
        elif name.startswith("ask__"):
            asked = name[5:]
        elif "__" in name:
            arg, _, choice = name.partition("__")
            args[arg] = choice
        elif name != "more" and (value := original.strip("'\"").strip()):
            args[name] = value
    if "ref" in m.re.groupindex and not ref:
        return None
    more = any(group_name(n) == "more" and v for n, v in m.groupdict().items())
    return Intent(tool=tool, text=text, ref=ref, args=args, more=more, asked=asked)
