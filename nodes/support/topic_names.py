"""What a topic is called and how it is summed up: words of its subject, never small talk.

A topic is titled by a few words of its subject: the first sentence of its first message that is
not small talk (a short greeting, thanks, a goodbye or "how are you", as keel's learned reading
of messages tells them, or words that say nothing), without the switch phrase that opened it ("new
topic: ...") and the politeness around it, at most six words (a later run of them when it says
clearly more than the first). A topic opened by small talk is titled ``SMALL_TALK``
until a message names it. When a topic ends, its summary says what was asked in its last messages
and what was done: small talk and the reply to it are left out, and so are the yes/no answers and
the questions that asked for them. Used by the topic_detect node (and the command nodes that end a
topic through it) and by the results that show topics (``readable_summary``, which also reads the
summaries keel stored before it wrote them this way).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from keel.checkpoints.text_rules import one_line
from keel.nodes.context.topic_shifts import PHRASE_PATTERN
from keel.nodes.context.topic_words import STOP_WORDS, content_words
from keel.nodes.models.notes import without_notes
from keel.nodes.support.previews import preview
from keel.tools.tasks.todo import TODO_TOOLS
from keel.tools.understanding.reading import understand
from keel.tools.understanding.words import strip_politeness
from keel.tools.yes_no import answer_of

SMALL_TALK = "Small talk"
"""The title of a topic that nothing but small talk was said in yet (the next request names it)."""
TALK_KINDS = frozenset({"greeting", "thanks", "goodbye", "wellbeing"})
"""The kinds of talk (``keel.tools.understanding``) that say nothing a topic is about."""
TALK_WORDS = 3
"""Small talk is short: a sentence of more content words than this says something."""
TITLE_WORDS = 6
TITLE_SCAN = 40
"""The words of a message's first sentence a title is chosen from."""
TITLE_MAX_CHARS = 80
LEAD_WORDS = 2
"""Words a switch phrase may come after ("anyway, back to ...") and still be left out of a title."""
SENTENCES = 5
"""The sentences of a message looked at for its subject (a long message costs no more)."""
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_CLAUSE_END = re.compile(r"[:;,]")
"""Where what a switch phrase names ends: "back to the groceries: add bananas"."""
_ARTICLES = frozenset({"the", "a", "an"})

SUMMARY_MESSAGES = 16
"""The last messages of a topic (the user's, keel's and its tools' results) its summary reads."""
ASKED_MAX = 4
DONE_MAX = 3
ITEM_CHARS = 80
ASKED, DONE = "Asked: ", ". Done: "
QUESTIONS = ("Are you sure", "Please answer yes or no")
LAST_EXCHANGE = ". Last exchange: "
"""How summaries were stored before: the title, then the last messages ("user: ...; ...")."""


def subject_of(text: str, tools: Sequence[Any] = ()) -> str | None:
    """``text`` from its first sentence that is not small talk; None when it is all small talk.

    ``tools``: what keel's reading of messages knows as requests ("hi, add milk" is one); none
    given, the todo tools, whose reading ships with keel (another list would be learned first).
    """
    tools = tools or TODO_TOOLS
    sentences = _SENTENCE.split(text, maxsplit=SENTENCES)
    for n, sentence in enumerate(sentences[:SENTENCES]):
        words = len(content_words(sentence))
        if not words:
            continue
        reading = understand(sentence, tools) if words <= TALK_WORDS else None
        if reading is None or reading.intents or reading.kind not in TALK_KINDS:
            return " ".join(sentences[n:]).strip()
    return None


def _cleaned(text: str) -> str:
    """``text`` on one line, without what a table cannot hold (NUL, lone surrogates)."""
    return one_line(text.encode("utf-8", "replace").decode("utf-8").replace("\x00", ""))


def title_line(text: str) -> str:
    """``text`` cleaned as titles are (one line, nothing a table cannot hold), at most 80
    characters: a longer one is cut between words with "..." (a single long word where it must).
    """  # noqa: D205
    title = _cleaned(text)
    if len(title) <= TITLE_MAX_CHARS:
        return title
    cut = title[: TITLE_MAX_CHARS + 1].rsplit(" ", 1)[0]
    if len(cut) > TITLE_MAX_CHARS or len(cut) < TITLE_MAX_CHARS // 2:
        cut = title[:TITLE_MAX_CHARS]
    return cut.rstrip() + "..."


def _richest(words: list[str]) -> list[str]:
    """The ``TITLE_WORDS`` words in a row that say most: the first ones, unless a later run holds
    two content words more ("Do you know a good way to stop a puppy chewing shoes?").
    """  # noqa: D205
    says = [int(bool(content_words(word))) for word in words]
    count = sum(says[:TITLE_WORDS])
    start, best = 0, count + 1  # a later run must say two words more than the first
    for n in range(TITLE_WORDS, len(words)):
        count += says[n] - says[n - TITLE_WORDS]
        if count > best:
            start, best = n - TITLE_WORDS + 1, count
    return words[start : start + TITLE_WORDS]


def topic_title(message: str, tools: Sequence[Any] = ()) -> str:
    """A few words of what ``message`` is about: "new topic: could you plan the garden?" is
    titled "Plan the garden"; small talk ("hi there") is titled ``SMALL_TALK``.
    """  # noqa: D205
    subject = subject_of(message, tools)
    if subject is None:
        return SMALL_TALK
    text = _cleaned(_SENTENCE.split(subject, maxsplit=1)[0])
    found = PHRASE_PATTERN.search(text)
    if found and len(text[: found.start()].split()) <= LEAD_WORDS:  # "ok so, new topic: ..."
        text = _CLAUSE_END.split(text[found.end() :].lstrip(" :,-"), maxsplit=1)[0] or text
    words = _richest(strip_politeness(text).split()[:TITLE_SCAN])
    while len(words) > 1 and words[0].lower() in _ARTICLES:
        words.pop(0)
    while len(words) > 1 and words[-1].lower().strip(".,;:!?") in STOP_WORDS:
        words.pop()
    title = title_line(" ".join(words).rstrip(" .,;:!-"))
    return title[:1].upper() + title[1:] if title else SMALL_TALK


def _asks(reply: str) -> bool:
    """The reply asks something (a yes/no question, "did you mean ...?"): nothing was done."""
    return reply.startswith(QUESTIONS) or reply.rstrip().endswith("?")


def _item(text: str) -> str:
    return (preview(text, ITEM_CHARS) or "").rstrip(" .!?;:,…")


def _last(items: list[str], most: int) -> str:
    """The last ``most`` different ``items``, in the order they came."""
    kept = list(dict.fromkeys(reversed(items)))[:most]
    return "; ".join(reversed(kept))


def summary_of(
    said: Sequence[tuple[str, str]], tools: Sequence[Any] = (), replies: bool = False
) -> str | None:
    """What was asked and done in a topic's messages (role, text), oldest first: "Asked: add buy
    milk; add buy eggs. Done: Created task 1: buy milk; Created task 2: buy eggs"; None when
    nothing but small talk was said.

    What was done is what the tools did, each in its declared sentence (a "tool" message's text:
    ``keel.tools.spec.tool_sentence``), never keel's replies, which a listing or a question would
    quote. ``replies``: the replies say it instead (summaries stored before tools were logged).
    """  # noqa: D205
    asked: list[str] = []
    done: list[str] = []
    question = talk = False
    for role, text in said:
        if role == "user":
            answer = question and answer_of(text) is not None
            subject = None if answer else subject_of(text, tools)
            talk, question = not answer and subject is None, False
            if subject:
                asked.append(_item(subject))
        elif role == "tool" and text:
            done.append(_item(text))
        elif role == "assistant" and text:
            reply = without_notes(text)
            question = _asks(reply)
            if replies and not (talk or question):
                done.append(_item(reply))
    summary = f"{ASKED}{_last(asked, ASKED_MAX)}" if asked else ""
    if done:
        summary += f"{DONE if asked else DONE.lstrip('. ')}{_last(done, DONE_MAX)}"
    return summary or None


def readable_summary(stored: str) -> str:
    """A topic's stored summary as results show it: what was asked and done.

    Summaries stored the earlier way (the title and the last exchange) are read into this one.
    """
    title, found, said = stored.partition(LAST_EXCHANGE)
    if not found:
        return stored
    parts = [part.partition(": ") for part in said.split("; ")]
    summary = summary_of([(role, text) for role, _, text in parts], replies=True) or ""
    if summary.startswith(ASKED):
        return summary
    return f"{ASKED}{title}" + (f". {summary}" if summary else "")


def asked_in(summary: str) -> str:
    """What the user asked, by a summary (``summary_of``): the words a topic is found by."""
    return summary.removeprefix(ASKED).partition(DONE)[0] if summary.startswith(ASKED) else ""
