"""The learned reading and the seed's decision table, settled into what a message asks.

The decision table (``keel.tools.understanding.phrasings``) reads the literal phrasings the tools
declare, splits lists ("add eggs, bread and butter") and names tasks by number, range or selection;
the learned ``Reader`` (``keel.tools.understanding.nlu.model``) reads what people say beyond them.
``settle`` takes both readings of one message and decides:

- the model is sure the message asks nothing of the tools (another assistant's job: "remove all
  my meetings", "check all emails from eric"; a list of lists): nothing is done, whatever the
  table read, but for a report of a deed ("went to the bank": a task done, if there is one; a
  question, "did my order get delivered", or a goodbye, "i enjoyed our talk", reports none); if
  it only fairly thinks so, a task the table would make or complete at once is asked about
  ('Did you mean to add a task ("text joe")?');
- the table reads a request carried out without a question (a list, a task shown, made or
  completed: "check my shopping list" read as completing "shopping list"), and the model, knowing
  the words, is sure of a request that only reads: the model's reading wins (a task done that
  the table only guessed from a past tense may become any request the model is sure of);
- the table reads a change that is asked about first (rename, delete: the seed's literal
  phrasings, the question naming the tasks): it stands;
- the tagger's words for the arguments where it is sure of them and they only take words off the
  table's ("eggs", not "eggs to my grocery list"; "cereal", not "cereal from my shopping list");
  a title that is only "it" or "that" is the tagger's words from elsewhere in the message ("out
  of milk, put it on the list": "milk"), or, when it has none, a question for them;
- the table finds nothing: the model's request when it is sure (a task made or completed from a
  question or a report is asked about instead), or, when the words of what to do are missing
  ("set a reminder for me"), a question for them; a question back ('Did you mean to add a task
  ("eggs") or to list them?') when it is only fairly sure; its kind of talk when it knows the
  words, and the table's "did you mean" when it does not (gibberish is no question about the
  weather).

No task is changed on a reading below ``SURE``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from keel.tools.spec import spec_of, tool_named
from keel.tools.understanding.nlu import Declared, Reader, Reading, reader_for
from keel.tools.understanding.nlu.data import SLOTS
from keel.tools.understanding.phrasings import PRONOUNS, Intent, clean_ref

SURE = 0.75
"""The least probability on which the model's reading is acted on, or overrides the table."""
ASK = 0.35
"""From here up to ``SURE``, a request the table does not read is asked about, not acted on."""
FAMILIAR = 0.5
"""The least share of a message's words the model has seen for its reading to count at all."""
FAMILIAR_OVERRIDE = 0.75
"""The least share of known words for the model to read a request otherwise than the table (which
puts slips of spelling right)."""
DOUBT = 0.5
"""From here, the model's word that a message asks nothing of the tools turns a task the table
would make or complete at once into a question ('Did you mean to add a task ("text joe")?')."""
TAGS_SURE = 0.8
"""The least probability of the tagger's whole reading for its words to replace the table's."""
FIELD_SURE = 0.7
"""The least probability of each word the tagger marks as a field's (a date) for them to count."""
KEPT_KINDS = frozenset({"help", "too_many", "too_long"})
"""What the table tells for certain: a bare "?" asks for help, and too much to read."""
OVERRIDING_TALK = frozenset({"offtopic", "lists"})
"""The model's kinds of talk that override a request the table read (small talk often comes with
a request: "thanks! also add stamps")."""
NEEDS = {"title": "title", "task_id": "ref", "descriptions": "ref"}
"""A tool argument and the tag of the words that fill it."""

_ASKS = re.compile(
    r"^\s*(?:did|does|do|have|has|had|was|were|is|are)\s|\?\s*$"
    r"|\b(?:when|where|why|how) (?:will|would|is|are|was|were|did|do|does|can|could)\b",
    re.I,
)
"""A question, which reports no deed ("did my order get delivered?", "have i spent too much?",
"i ordered new sheets, when will they arrive")."""

Settled = tuple[tuple[Intent, ...], str | None, str | None]
"""Requests, or a kind of talk and its detail (as ``reading.Understanding``)."""


def settle(
    text: str, intents: tuple[Intent, ...], kind: str | None, detail: str | None,
    tools: Sequence[Declared],
) -> Settled:  # fmt: skip
    """What ``text`` asks, from the table's ``intents`` (or ``kind``) and the model's reading."""
    if kind in KEPT_KINDS or not text.strip():
        return intents, kind, detail
    reader = reader_for(tools)
    reading = reader.read(text)
    if intents:
        return _with_table(text, intents, reading, reader, tools)
    if reading.familiar < FAMILIAR:
        return intents, kind, detail
    if reading.label not in tools_named(tools):
        needed = SURE if kind == "offtopic" else ASK  # the table's "a question": only a sure word
        talk = reading.confidence >= needed and kind in (None, "unknown", "offtopic")
        return (), reading.label if talk else kind, None if talk else detail
    made = _intent(text, reading, tools)
    if reading.confidence >= SURE and made is not None:
        if _may_act(made, text, tools):
            return (made,), None, None
        return (), "unsure", _question(reading, tools)  # "would you mind adding 'x'?": asked
    if reading.confidence >= SURE and made is None:
        return (), "missing", reading.label  # "set a reminder for me": which, or what?
    if reading.confidence >= ASK and kind != "offtopic":
        return (), "unsure", _question(reading, tools)
    return intents, kind, detail


def _with_table(
    text: str, intents: tuple[Intent, ...], reading: Reading, reader: Reader,
    tools: Sequence[Declared],
) -> Settled:  # fmt: skip
    titled = tuple(_titled(i, text, reading, reader) for i in intents)
    intents = tuple(i for i in titled if not _names_nothing(i.args.get("title")))
    if not intents:  # "add it": the words of what to add are not there
        return (), "missing", titled[0].tool
    table = intents[0]
    sure = reading.confidence >= SURE and reading.familiar >= FAMILIAR
    if sure and reading.label in OVERRIDING_TALK and not any(i.reported for i in intents):
        return (), reading.label, None
    if sure and reading.label not in tools_named(tools) and all(i.reported for i in intents):
        if reading.label != "offtopic" or _ASKS.search(text):  # "did my order get delivered"
            return (), reading.label, None
    doubted = reading.label in OVERRIDING_TALK and reading.confidence >= DOUBT
    if doubted and len(intents) == 1 and _acts_at_once(table, tools) and not table.reported:
        return (), "unsure", _option(table.tool, {**table.args, "ref": table.ref or ""}, tools)
    other = len(intents) == 1 and table.tool != reading.label
    known = reading.familiar >= FAMILIAR_OVERRIDE  # "cmoplete task 2": the table knows the slip
    if sure and known and other:
        made = _intent(text, reading, tools)
        if made is not None and _may_act(made, text, tools):
            only_reads = not spec_of(tool_named(tools, made.tool)).mutates
            light = table.reported or not _asks_first(table, tools)
            both_ask = _asks_first(made, tools) and _asks_first(table, tools)  # a yes still due
            if (light and (only_reads or table.reported)) or both_ask:
                return (made,), None, None
    fields = {t.name: t.fields for t in tools}
    cleaned = [_cleaned(i, reader, fields.get(i.tool, ())) for i in intents]
    return _shared(cleaned), None, None


SHARED = ("list", "due")
"""What the items of one list request share when it is said once ("add eggs, milk and rice to
the grocery list for saturday": all three on it, due then)."""


def _shared(intents: list[Intent]) -> tuple[Intent, ...]:
    """``intents`` with each list's items given what one of them was read to say of all."""
    said: dict[str, dict[str, Any]] = {}
    for intent in intents:
        if intent.listed_in is not None:
            for name in SHARED:
                if name in intent.args:
                    said.setdefault(intent.listed_in, {}).setdefault(name, intent.args[name])
    return tuple(
        intent.with_args(**{**said[intent.listed_in], **intent.args})
        if intent.listed_in in said
        else intent
        for intent in intents
    )


def _names_nothing(title: Any) -> bool:
    """A title that is only a word for something said before ("it", "that"): no task's words."""
    return isinstance(title, str) and title.strip(" .!?\"'").casefold() in PRONOUNS


def _titled(intent: Intent, text: str, reading: Reading, reader: Reader) -> Intent:
    """``intent`` with the tagger's title for "it" when the message names it elsewhere ("out of
    apples, add that to my list": "apples"), the model sure of the same request and of its words.
    """  # noqa: D205
    if not _names_nothing(intent.args.get("title")) or reading.label != intent.tool:
        return intent
    if reading.confidence < SURE:
        return intent
    words, probability = reader.arguments(text, intent.tool)
    title = words.get("title")
    if probability < TAGS_SURE or not title or _names_nothing(title):
        return intent
    return intent.with_args(title=title)


def _acts_at_once(intent: Intent, tools: Sequence[Declared]) -> bool:
    """The table's request changes a task without asking first (makes or completes one)."""
    spec = spec_of(tool_named(tools, intent.tool))
    return spec.mutates and spec.confirm is None


def _asks_first(intent: Intent, tools: Sequence[Declared]) -> bool:
    """The request is carried out only after a yes (rename, delete, clear a list)."""
    return spec_of(tool_named(tools, intent.tool)).confirm is not None


def _may_act(intent: Intent, text: str, tools: Sequence[Declared]) -> bool:
    """A request the model read (sure of it, as the caller checked) may be carried out: a task is
    never made from a question, and never completed on the model's word alone (the table reads
    reports of a deed; one it turned down, "I missed the dentist", is asked about).
    """  # noqa: D205
    spec = spec_of(tool_named(tools, intent.tool))
    if spec.told_done:
        return False
    return not (spec.mutates and spec.confirm is None and text.rstrip().endswith("?"))


def tools_named(tools: Sequence[Declared]) -> set[str]:
    """The names of ``tools``."""
    return {t.name for t in tools}


def guess(text: str, tools: Sequence[Declared], second: bool = False) -> Intent | None:
    """The model's likeliest request for ``text`` (or, ``second``, its runner-up), however sure,
    if its arguments are all there.
    """  # noqa: D205
    reader = reader_for(tools)
    reading = reader.read(text)
    if second:
        label = reading.runner_up
        words = reader.arguments(text, label)[0] if tool_named(tools, label) is not None else {}
        reading = replace(reading, label=label, args=words)
    return _intent(text, reading, tools)


def _intent(text: str, reading: Reading, tools: Sequence[Declared]) -> Intent | None:
    """The request the model read, when the tagger found every argument it needs."""
    tool_ = tool_named(tools, reading.label)
    if tool_ is None:
        return None
    ref: str | None = None
    args: dict[str, Any] = {}
    for name in tool_.required:
        words = reading.args.get(NEEDS.get(name, name))
        if not words:
            return None
        if name == "task_id":
            ref = clean_ref(words) or None
            if ref is None:
                return None
        else:
            args[name] = words
    for name in tool_.fields:
        if words := reading.args.get(SLOTS[name]):
            args[name] = words
    return Intent(tool=reading.label, text=text, ref=ref, args=args)


def _cleaned(intent: Intent, reader: Reader, fields: tuple[str, ...] = ()) -> Intent:
    """``intent`` with the tagger's words for its title and task, where it is sure of them and
    they only take words off the table's: a title from either end ("a reminder to wash dishes"),
    a task from its end ("cereal from my shopping list"); and the words of the task ``fields``
    the tool takes, where it is sure of each of them, out of the title ("call the dentist on
    friday": due "on friday").
    """  # noqa: D205
    taken = {k: v for k, v in intent.args.items() if k not in SLOTS or k in fields}
    intent = replace(intent, args=taken)  # "change 3 on my work list to ...": no list to rename
    if intent.tool not in reader.labels:
        return intent
    words, probability = reader.arguments(intent.text, intent.tool)
    left_in = False  # words of a field the tagger marked but that were not taken: kept as said
    for name in fields:
        said = words.get(SLOTS[name])
        if not said or name in intent.args:
            continue
        title = intent.args.get("title")
        left = _without(title, said) if isinstance(title, str) else None
        inside = left == title and _find(str(title), said) is not None  # "a at 5 b": no
        tagged = words.get("title")
        if inside and tagged and _shorter(tagged, str(title)) and _find(tagged, said) is None:
            inside, left = False, tagged  # "eggs to my grocery list": "eggs", on "grocery"
        if not inside and reader.certainty(intent.text, intent.tool, SLOTS[name]) >= FIELD_SURE:
            intent = intent.with_args(**{name: said}, **({"title": left} if left else {}))
        else:
            left_in = True
    if probability < TAGS_SURE or left_in:  # the tagger's title would drop the words left in
        return intent
    title = intent.args.get("title")
    if isinstance(title, str) and (new := words.get("title")) and _shorter(new, title):
        intent = intent.with_args(title=new)
    if intent.ref is not None and intent.task_id is None and intent.select is None:
        new_ref = clean_ref(words.get("ref") or "")
        fits = new_ref and intent.ref.casefold().startswith(new_ref.casefold())
        if fits and _shorter(new_ref, intent.ref) and not intent.refers_back:
            intent = replace(intent, ref=new_ref)
    return intent


DANGLING = frozenset({"on", "at", "by", "before", "for", "until", "till", "in", "due", "from"})
"""A word left at a title's end once its words of when are taken off ("renew my passport
before")."""


def _without(title: str, due: str) -> str:
    """``title`` without the words of when at its end or start (the title as it was when they
    stand inside it, or make all of it).
    """  # noqa: D205
    found = _find(title, due)
    if found is None:
        return title
    at, end = found
    if end == len(title):
        words = title[:at].rstrip(" ,").split(" ")
        if words and words[-1].casefold() in DANGLING:
            words.pop()
        left = " ".join(words).rstrip(" ,")
    elif at == 0:
        left = title[end:].lstrip(" ,")
    else:
        return title
    return left or title


def _find(text: str, words: str) -> tuple[int, int] | None:
    """Where ``words`` stand last in ``text``, in any case (positions in ``text`` itself: a case
    fold may change a text's length, "ß" to "ss"); None when they do not.
    """  # noqa: D205
    found = None
    for match in re.finditer(re.escape(words), text, re.IGNORECASE):
        found = (match.start(), match.end())
    return found


def _shorter(new: str, old: str) -> bool:
    """``new`` is ``old`` with words taken off (not only symbols), none made up."""
    at = old.casefold().find(new.casefold())
    if at < 0 or len(new) >= len(old):
        return False
    removed = old[:at] + old[at + len(new) :]
    return any(c.isalpha() for c in removed)


def _question(reading: Reading, tools: Sequence[Declared]) -> str:
    """'add a task ("eggs") or to list them' for an unsure reading: its two likeliest requests."""
    options = [
        _option(label, reading.args if label == reading.label else {}, tools)
        for label in (reading.label, reading.runner_up)
    ]
    return " or to ".join(dict.fromkeys(o for o in options if o))


def _option(label: str, args: dict[str, str], tools: Sequence[Declared]) -> str | None:
    tool_ = tool_named(tools, label)
    example = spec_of(tool_).example if tool_ else None
    if not example:
        return None
    doing = example.split(" (")[0]
    words = args.get("title") or args.get("ref")
    return f'{doing} ("{words}")' if words else doing
