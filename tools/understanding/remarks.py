"""What a piece of a message says that asks nothing of its own: a remark ("I have to go now"),
an aside after a request ("it was a typo", "we still have some"), and a report of a deed done
("I called mom"), which asks for the tool a done task calls for. Read by
``keel.tools.understanding.reading``.
"""  # noqa: D205

from __future__ import annotations

import re

from keel.tools.understanding.phrasings import Intent, Table
from keel.tools.understanding.words import IRREGULAR, stem

SELF = re.compile(r"^(?:i|we|i'?m|i'?ve|we'?re)\b", re.I)
"""A statement about oneself: in a question, no request ("I should call mom, shouldn't I?")."""
REMARK = re.compile(
    r"^(?:(?:go|run|leave|dash|head off|get going|be off|split)(?: now| soon| then)?(?:$|,)"
    r"|(?:say|admit|be honest|tell you|agree|confess|ask)\b)",
    re.I,
)
"""What "I have to ..." says when it is a remark, not a task ("I have to go now")."""
ASIDE = re.compile(r"^(?:it|that|this|they|those|these)(?:'s|'re| is| was| are| were)\b", re.I)
"""A word after a request on why it is asked ("it was a typo", "they're done"): no task of it."""
BESIDE = re.compile(
    r"^(?:we|i)(?:'ve|'re|'m| have| are| am)?(?: still| already| just| now)?"
    r" ?(?:got|have|had|out|plenty|enough)\b(?! to\b)",
    re.I,
)
"""A remark after a request on what there is already, asking nothing of its own ("we still have
some", "i've got two loaves", "we're out"): said beside it, not another item of its list ("we
need milk", "we have to pay rent" are requests)."""


_DID = re.compile(
    r"^(?:(?:i|we|i've|ive|we've|have|has|had|just|already|finally|also|so)\s+)*(?P<rest>\S.*)$",
    re.I,
)
NOT_DEEDS = frozenset(
    "need needed want wanted used liked loved hated bored tired excited worried scared "
    "interested supposed married forgot forgotten missed cancelled canceled postponed skipped "
    "delayed rescheduled moved failed tried started began planned meant hoped expected "
    "wondered asked considered thought".split()
)
"""Past forms that report no deed done ("I needed", "I was bored")."""


NOT_REPORTS = frozenset(
    stem(v)
    for v in "add put create delete remove drop rename change update list show erase wipe clear "
    "note jot scratch trash".split()
)
"""Verbs whose past is about the list itself ("I added milk"), not a task done."""


def told_done(text: str, table: Table) -> Intent | None:
    """A report of a task done ("I called mom"), for the tool a done task asks for."""
    if table.told_done is None or not (m := _DID.match(text)):
        return None
    rest = m["rest"]
    verb = rest.split(" ", 1)[0].lower()
    past = verb in IRREGULAR or (verb.endswith("ed") and len(verb) >= 5)
    if not past or verb in NOT_DEEDS or stem(verb) in NOT_REPORTS:
        return None
    if " " not in rest:
        return None  # a bare "finished" names no task
    if IRREGULAR.get(verb) == verb and rest == text:
        return None  # "set an alarm", "read my list": a past only after "I" ("I set up the tent")
    return Intent(tool=table.told_done, text=text, ref=rest, reported=True)
