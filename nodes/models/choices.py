"""What is meant without being named: a yes to a guess, the pick after "which one?", "it".

After a question about a request the model was not sure of ('Did you mean to add a task
("eggs")?'), a yes is that request (``guessed``). When a request names a task that several
match, the offline model lists them ('Several tasks match "milk": 1. buy milk, 4. milk the cow.
Which one? ...') and ends the turn. The next message may be just the pick: "4", "task 4", "#4",
"the second one", "the first". ``picked`` reads it against the last such question in the history
the model is given, with the user's request just before it, and returns that request's intents
for the ambiguous task, now naming the one picked.
``referred`` reads "it", "that one" or "them": the tasks the turn's own results named last, else
the ones the assistant's last reply named ("Task 3: call mom (open)"). Stateless, like the rest of
the offline model: everything is read from the messages.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.tools import BaseTool

from keel.checkpoints.reminders import REMINDER
from keel.nodes.models.lookups import EARLIER_HEADER
from keel.tools.understanding.phrasings import NUMBER_WORDS, Intent
from keel.tools.understanding.reading import likeliest, normalize, understand
from keel.tools.yes_no import answer_of

WHICH = 'Several tasks match "{ref}": {listed}. Which one?'
"""The question, as the offline model asks it (``listed``: "1. buy milk, 4. milk the cow")."""
_ASKED = re.compile(
    r'Several tasks match "(?P<ref>[^"\n]{1,300})": (?P<listed>[^\n]{1,3000}?)\. Which one\?'
)
_LISTED = re.compile(r"(?:^|, )(\d{1,19})\. ")
_USER_LINE = re.compile(r"^User: (?P<text>.+)$", re.M)
_PICK = re.compile(
    r"^(?:(?:the |task |number |no\.? |#)*#?(?P<number>\d{1,19})|(?:the )?(?P<nth>\w+)"
    r"(?: one| task)?)(?: please| pls)?$",
    re.I,
)


def picked(message: str, earlier: Sequence[BaseMessage], tools: Sequence[BaseTool]) -> list[Intent]:
    """The intents ``message`` completes by picking a task listed in ``earlier``; [] if none."""
    pick = _PICK.match(normalize(message).strip(" .!?"))
    if pick is None:
        return []
    text = "\n".join(m.text for m in earlier)
    question = next(reversed([*_ASKED.finditer(text)]), None)
    if question is None:
        return []
    ids = _LISTED.findall(question["listed"])
    if pick["number"] is not None:
        chosen = pick["number"] if pick["number"] in ids else None
    else:
        place = NUMBER_WORDS.get(pick["nth"].casefold())
        chosen = ids[int(place) - 1] if place and int(place) <= len(ids) else None
    requests = _USER_LINE.findall(text[: question.start()])
    if chosen is None or not requests:
        return []
    ref = question["ref"]
    intents = understand(requests[-1], tools).intents
    return [i.with_ref(chosen) for i in intents if i.ref == ref]


_GUESS = re.compile(r"^You: Did you mean to (?P<guess>[^\n]{1,400})\?$", re.M)
"""The offline model's question about a request it was not sure of (``understanding.talk.say``)."""


_ORDINAL = re.compile(
    r"^(?:the )?(?:(?P<first>first|1st|former)|(?P<second>second|2nd|latter|other))"
    r"(?: one| option)?(?: please)?$"
)
"""Which of the two requests keel asked about is meant ("the first", "the second one")."""


def guessed(
    message: str, earlier: Sequence[BaseMessage], tools: Sequence[BaseTool]
) -> list[Intent]:
    """The request an answer chooses right after keel asked 'Did you mean to add a task
    ("eggs")?' about the message before it: a yes takes that message's likeliest reading; "the
    first" or "the second" picks one of two ('... or to list them?'), and so does the request's
    verb alone ("add it", read as the words of a task missing); [] otherwise (another reply since,
    or a yes to two).
    """  # noqa: D205
    text = "\n".join(m.text for m in earlier)
    current = text.split(EARLIER_HEADER)[0]
    replies = [line for line in current.splitlines() if line.startswith("You: ")]
    question = _GUESS.match(replies[-1]) if replies else None
    if question is None:
        return []
    requests = _USER_LINE.findall(current[: current.rfind(replies[-1])])
    if not requests:
        return []
    options = question["guess"].split(" or to ")
    if len(options) == 1:
        which = 0 if answer_of(message) == "yes" else None
    else:
        which = _chosen_option(message, requests[-1], tools)
    made = None if which is None else likeliest(requests[-1], tools, second=which == 1)
    return [made] if made is not None else []


def _chosen_option(message: str, request: str, tools: Sequence[BaseTool]) -> int | None:
    """Which of two guesses about ``request`` ``message`` picks: by its place, or by its verb."""
    ordinal = _ORDINAL.match(" ".join(normalize(message).casefold().rstrip(".!").split()))
    if ordinal is not None:
        return 0 if ordinal["first"] else 1
    understood = understand(message, tools)
    if understood.kind != "missing":
        return None
    for which in (0, 1):
        made = likeliest(request, tools, second=which == 1)
        if made is not None and made.tool == understood.detail:
            return which
    return None


ANSWERS_TO_A_REMINDER = frozenset({"complete_todo_task"})
"""The requests a reminder's task is meant by when they name none ("done", "did it")."""


def reminded(
    message: str, earlier: Sequence[BaseMessage], tools: Sequence[BaseTool]
) -> list[Intent]:
    """A request that names no task ("done", "finished it") right after a reminder: about the
    reminder's task; [] otherwise (another reply since, or a request that needs none).
    """  # noqa: D205
    understood = understand(message, tools)
    if understood.kind != "missing" or understood.detail not in ANSWERS_TO_A_REMINDER:
        return []
    text = "\n".join(m.text for m in earlier).split(EARLIER_HEADER)[0]
    replies = [line for line in text.splitlines() if line.startswith("You: ")]
    if not replies or not replies[-1].removeprefix("You: ").startswith(REMINDER):
        return []
    ids = _ids(replies[-1])
    if len(ids) != 1:
        return []
    return [Intent(str(understood.detail), message, ref=ids[0])]


_NAMED = re.compile(r"\b[Tt]ask (\d{1,19})\b|^\s*(\d{1,19})\. ", re.M)
PLURAL = frozenset({"them", "those", "these", "both", "both of them"})


def referred(pronoun: str, results: Sequence[Any], earlier: Sequence[BaseMessage]) -> list[int]:
    """The task ids ``pronoun`` stands for: the task the turn's last result (a tool's JSON) was
    about, else those the assistant's last reply among ``earlier`` named; [] when that is not one
    task (or, plural, none).
    """  # noqa: D205
    found: list[str] = []
    for result in reversed(results):
        if isinstance(result, dict) and isinstance(result.get("id"), int):
            found = [str(result["id"])]
            break
    if not found:
        text = "\n".join(m.text for m in earlier)
        replies = [line for line in text.splitlines() if line.startswith("You: ")]
        last = text[text.rfind(replies[-1]) :] if replies else ""
        found = _ids(last.split("\nUser: ")[0])
    ids = list(dict.fromkeys(int(n) for n in found))
    return ids if pronoun in PLURAL or len(ids) == 1 else []


def _ids(text: str) -> list[str]:
    return [a or b for a, b in _NAMED.findall(text)]
