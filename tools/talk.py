"""A message that asks for no tool: what kind of talk it is, and what the offline model says to it.

Greetings, thanks, goodbyes and "how are you" get one short friendly line; "help" and "what can you
do?" get the help paragraph; a question outside todos gets one honest sentence about what keel can
do offline; anything else gets a short "did you mean ...", with the closest request keel knows
(a misspelt command word's tool, or adding the words as a task). ``kind_of`` tells the kind,
``say`` the words. Used by ``keel.tools.understanding`` and the rule-based chat model.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from keel.tools.words import near, strip_politeness

if TYPE_CHECKING:
    from keel.tools.phrasings import Table

KINDS: dict[str, re.Pattern[str]] = {
    "greeting": re.compile(
        r"^(?:hi|hello|hey|heya|hiya|howdy|yo|hallo|hola|greetings|sup|what'?s up|good "
        r"(?:morning|afternoon|evening|day)|morning|evening)(?: there| keel| again| all| you)?$"
    ),
    "thanks": re.compile(
        r"^(?:(?:ok(?:ay)?|great|perfect|awesome|nice|cool|brilliant|lovely|super|excellent"
        r"|wonderful|fantastic|sweet|neat|good|fine|alright|all right|got it|understood|noted"
        r"|cheers|ta|thx|ty|thanks|thank you|many thanks|much appreciated|appreciate it"
        r"|that'?s (?:great|perfect|all good|helpful)|good job|well done|you'?re the best"
        r"|nice one|good one|thumbs up|legend|top|sorted|ace|grand"
        r"|you rock|love it)[ ,!.]*)+(?:so much|a lot|very much|a bunch|a ton|again)?$"
    ),
    "goodbye": re.compile(
        r"^(?:bye|goodbye|bye bye|see (?:you|ya)(?: later| soon| tomorrow)?|later|cya|ttyl"
        r"|good ?night|night night|nighty night|gn|take care|catch (?:you|ya) later|speak soon"
        r"|talk (?:to you )?later|that'?s (?:all|it)(?: for (?:now|today))?|i'?m done"
        r"|nothing else|nope that'?s it|done for (?:now|today))$"
    ),
    "wellbeing": re.compile(
        r"^(?:how are (?:you|u|things)|how'?s it going|how do you do|how have you been"
        r"|what'?s new|you ok|how are you doing|how r u)(?: today)?$"
    ),
    "help": re.compile(
        r"^(?:help|help me|\?+|/help|/start|menu|commands|options|usage|instructions"
        r"|what can (?:you|i) (?:do|say|ask)|what do you do|what are you|who are you"
        r"|how does (?:this|it) work|how do i use (?:this|you|it)|what can you help (?:me )?with"
        r"|what are (?:the|your) commands|how do i (?:start|begin)|what should i (?:say|type)"
        r"|i'?m (?:lost|confused|stuck)|what now)(?: (?:here|again))?$"
    ),
}
"""How each kind of talk is said, matched whole against the message in lower case."""
_ELSEWHERE = re.compile(
    r"^(?:tell me|explain|give me|write|translate|calculate|recommend|suggest|play|convert"
    r"|compute|define|summari[sz]e|sing|draw|turn on|turn off|set an alarm|set a timer|google"
    r"|order me|book me|send|text|email me|open the)\b"
)
"""What people ask an assistant for that is no todo ("translate good night into German")."""
_QUESTION = re.compile(
    r"\?$|^(?:what|who|whom|whose|when|where|why|how|which|is|are|am|was|were|do|does|did"
    r"|can|could|will|would|should|shall)\b"
)
SHORT_TALK_CHARS = 60
WORDS_OF = {
    "thanks": re.compile(
        r"\b(?:thanks?|thank (?:you|u|ya)|thx|tysm|ty|cheers|ta|appreciate(?:d| it)?|legend"
        r"|you rock|you'?re (?:the best|a star|great|amazing)|brilliant|awesome|perfect|great"
        r"|lovely|nice one|good job|well done)\b"
    ),
    "greeting": re.compile(
        r"^(?:hi+|hello+|hey+|heya|hiya|howdy|yo|g'?day|morning|evening"
        r"|good (?:morning|afternoon|evening|day))\b"
    ),
    "goodbye": re.compile(
        r"\b(?:bye|goodbye|see (?:you|ya)|cya|ttyl|good ?night|nite|take care"
        r"|(?:have|got|need) to (?:go|run|dash)|gotta (?:go|run|dash))\b|^(?:later|night)\b"
    ),
}
"""In a short message that asks nothing, these words alone say what kind of talk it is."""
_HELP = re.compile(
    r"\b(?:help|commands?|your options|my options|what can (?:you|i) (?:do|ask|say|type)"
    r"|what (?:can|does|do) (?:this thing|this app|this|it|you) do|what are you for"
    r"|what (?:things )?can you do|(?:your|the) features|what are you able to"
    r"|how (?:does )?(?:this|it|the|keel|you)(?: (?:assistant|app|thing|bot|tool))? works?"
    r"|(?:able|supposed) to do"
    r"|what you can do"
    r"|how do i use|how to use)\b"
)

TALK_MAX_CHARS = 200
"""Small talk is short: a longer message is read only as a question or not."""
REPLIES = {
    "greeting": "Hi! What would you like to do with your list?",
    "thanks": "You're welcome!",
    "goodbye": "Bye! Your tasks are saved for next time.",
    "wellbeing": "All good here, thanks. What can I do for your list?",
    "lists": (
        "I keep one list of your tasks; I can add to it, show it, and complete, rename or delete "
        'what is on it. Say "help" to see how.'
    ),
    "offtopic": (
        "Offline I can only help with your todo list; with a language model configured "
        '(OPENAI_API_KEY) I can do more. Say "help" to see what I can do.'
    ),
}


def kind_of(text: str, table: Table) -> tuple[str, str | None]:
    """The kind of talk ``text`` is (see ``KINDS``, or offtopic, unknown), and for unknown the
    closest request keel knows.
    """  # noqa: D205
    lowered = text.lower().strip()
    if len(lowered) > TALK_MAX_CHARS:
        asked = _QUESTION.search(lowered[:20]) or _ELSEWHERE.search(lowered[:20])
        return ("offtopic", None) if asked else ("unknown", None)
    plain = strip_politeness(lowered).strip(" !.,?~") or lowered
    forms = {re.sub(r"[^\w\s'?/]", "", t).strip(" ?") for t in (lowered, plain)} | {plain}
    for kind, pattern in KINDS.items():
        if any(pattern.match(form) for form in forms):
            return kind, None
    if _HELP.search(lowered):
        return "help", None
    if _ELSEWHERE.search(plain):
        return "offtopic", None
    if len(lowered) <= SHORT_TALK_CHARS:
        for kind, pattern in WORDS_OF.items():
            if pattern.search(lowered):
                return kind, None
    if not any(forms) and not lowered.strip(" ?"):
        return "help", None
    if _QUESTION.search(lowered):
        return "offtopic", None
    return "unknown", _closest(plain, table)


def _closest(text: str, table: Table) -> str | None:
    """The request keel would guess ``text`` meant: the tool of a word close to a command word."""
    words = re.findall(r"[a-z]+", text)
    for word in words[:3]:
        for tool, pattern in table.rows:
            literals = set(re.findall(r"[a-z]{4,}", pattern.pattern[:60]))
            if any(near(word, w) or _two_slips(word, w) for w in literals):
                return tool
    if 0 < len(words) <= 5 and len(text) <= 60:
        return f"add:{text}"
    return None


def _two_slips(typed: str, known: str) -> bool:
    """``typed`` is ``known`` with two slips, for words of six letters or more."""
    if min(len(typed), len(known)) < 6 or abs(len(typed) - len(known)) > 2 or typed[0] != known[0]:
        return False
    return any(
        near(typed[:i] + typed[i + 1 :], known) or near(typed, known[:i] + known[i + 1 :])
        for i in range(1, len(typed))
    )


def say(kind: str, detail: str | None, examples: dict[str, str], help_text: str) -> str:
    """What the offline model answers to a message of ``kind`` (``examples``: a tool's example)."""
    if kind == "help":
        return help_text
    if kind == "too_many":
        return (
            f"That is {detail} requests in one message; I take at most 100 at a time, so I did "
            "nothing. Please split it up."
        )
    if kind == "too_long":
        return (
            "That message is too long for me to read offline; please split it up into shorter "
            "messages."
        )
    if kind in REPLIES:
        return REPLIES[kind]
    if kind == "unsure" and detail:
        return f"Did you mean to {detail}?"
    if kind == "missing" and detail in examples:
        doing, _, said = examples[detail].partition(" (")
        return f"I can {doing}; say which, for example {said.rstrip(')')}."
    if detail and detail.startswith("add:"):
        return f'Sorry, I didn\'t get that. Did you mean "add {detail[4:]}"? Say "help" for more.'
    if detail and detail in examples:
        return f"Sorry, I didn't get that. Did you mean to {examples[detail]}?"
    return 'Sorry, I didn\'t get that. Try "add buy milk", "what\'s on my list?" or "help".'
