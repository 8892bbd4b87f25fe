"""Time read from people's words: the person's time zone, when a task is due, how often it repeats.

``When`` is where and when words are read: the person's IANA time zone and the present moment.
Due dates are read by dateparser ("friday", "tomorrow at 5pm", "in 45 minutes", "2026-12-04") as
a wall-clock time in that zone: a day without a time of day is a day, a time of day makes it a
moment. Repeats are read by ``recurrent`` as an iCalendar RRULE ("every monday", "every other
week"), and ``dateutil.rrule`` finds their next time. Words that name no time, or a time already
past, raise ``FieldError`` with a question to put to the person, never a guess. The task fields
that store these (``keel.checkpoints.task_fields``) read through here.
"""

from __future__ import annotations

import functools
import re
import warnings
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

DUE_WORDS_MAX_CHARS = 100
"""The longest wording of a due date read (a longer one is no date)."""
GRACE = timedelta(minutes=1)
"""How far in the past a moment may be and still be set (the person spoke a minute ago)."""


class FieldError(ValueError):
    """Words a field cannot store: ``message`` is a question to put to the person as it is."""

    def __init__(self, code: str, message: str) -> None:
        """Keep the code for callers and the question for people."""
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class When:
    """Where and when words are read: the person's time zone and the present moment."""

    zone: ZoneInfo
    now: datetime

    @property
    def today(self) -> date:
        """The person's calendar day now."""
        return self.now.astimezone(self.zone).date()


@functools.cache
def local_zone() -> str:
    """The machine's own time zone (``TZ``, ``/etc/localtime``), or UTC when it names none.

    Read once, when this module is imported: reading it means reading files, which an event loop
    must not wait for (a LangGraph server refuses it).
    """
    from tzlocal import get_localzone_name

    try:
        name = get_localzone_name() or "UTC"
        ZoneInfo(name)
    except (LookupError, ValueError, OSError):  # a zone tzlocal cannot name, or no file of it
        return "UTC"
    return name


_ZONES: dict[str, ZoneInfo] = {}
"""The time zones read so far, by name: a zone is read from its file once."""


def zone_named(name: str | None) -> ZoneInfo:
    """The IANA time zone ``name`` ("Europe/Berlin"); UTC for none. Raises ``FieldError``.

    The first time a name is asked for, its file is read: ``zone_ready`` says whether it was,
    so that async code can read it in a thread first (``asyncio.to_thread(zone_named, name)``).
    """
    key = name or "UTC"
    zone = _ZONES.get(key)
    if zone is not None:
        return zone
    try:
        zone = ZoneInfo(key)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise FieldError("invalid_timezone", f"{name!r} is not a time zone I know.") from None
    if len(_ZONES) < ZONES_KEPT:
        _ZONES[key] = zone
    return zone


ZONES_KEPT = 1000
"""Time zones kept once read (there are about 600)."""


ZONE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_+-]*(?:/[A-Za-z0-9_+-]+){0,2}")
"""What an IANA time zone's name looks like ("UTC", "Europe/Berlin", "America/Argentina/Salta")."""


def zone_name(name: str) -> str:
    """``name`` when it can name a time zone (read when a zone was read already; else its form
    only: the file is read later, off the event loop). Raises ``FieldError``.
    """  # noqa: D205
    if zone_ready(name):
        return str(zone_named(name))
    if len(name) > 64 or not ZONE_NAME.fullmatch(name):
        raise FieldError("invalid_timezone", f"{name!r} is not a time zone I know.")
    return name


def zone_ready(name: str | None) -> bool:
    """The zone ``name`` was read already: ``zone_named`` reads no file for it."""
    return (name or "UTC") in _ZONES


# --- due -------------------------------------------------------------------------------------


def _parser(settings: dict[str, Any]) -> Any:
    """Dateparser's parser for English with ``settings`` (its language data loads on first use,
    in a fifth of a second; a parser costs little after that).
    """  # noqa: D205
    from dateparser.date import DateDataParser

    return DateDataParser(languages=["en"], settings={**settings, "RETURN_TIME_AS_PERIOD": True})


TIMED = frozenset({"time", "part_of_day"})
"""dateparser's periods of words that name a time of day ("at 5pm", "in 2 hours", "tonight")."""


LEADING = re.compile(r"^(?:(?:it'?s |is )?due (?:on |by |at )?|before |until |till |for )", re.I)
"""Words that only say a date is a deadline ("due friday", "before noon"): not read as a date."""


_BARE_HOUR = re.compile(
    r"(?:\b(?:at|by|around)|@)\s*(\d{1,2})(?:\s*o'?clock)?(?![\d:.]|\s*(?:am|pm|a\.m|p\.m|h\b"
    r"|hrs?\b|hours?\b|min|minutes?\b|th\b|st\b|nd\b|rd\b|/|-))"
    r"|\b(\d{1,2})\s*o'?clock",
    re.I,
)
"""An hour said alone ("at 10", "at 5 o'clock"), which dateparser reads as a day or month."""
AFTERNOON_HOURS = range(1, 8)
"""Hours said alone that people mean in the afternoon or evening ("at 5": 17:00)."""
_MORNING = re.compile(r"\b(?:morning|a\.?m\.?|before noon)\b", re.I)
_LATER_IN_THE_DAY = re.compile(r"\b(?:afternoon|evening|tonight|night|p\.?m\.?)\b", re.I)
_PART_OF_DAY = re.compile(r"\s*\b(?:in the (?:morning|afternoon|evening)|at night)\b", re.I)
"""Said after an hour and read into it ("at 6 in the morning": 06:00); "this morning" stays for
dateparser, which reads a time of it that has passed as passed."""


def _hours(text: str) -> str:
    """``text`` with an hour said alone as a time of day: "friday at 10" is 10:00, "at 5" 17:00
    (1 to 7 are in the afternoon, as people mean them), "at 12" noon; with a part of the day said
    ("at 6 in the morning", "at 11 tonight", "tomorrow morning at 7"), in that part.
    """  # noqa: D205
    morning, later = bool(_MORNING.search(text)), bool(_LATER_IN_THE_DAY.search(text))

    def timed(found: re.Match[str]) -> str:
        hour = int(found.group(1) or found.group(2))
        if hour > 23:
            return found.group(0)
        if hour == 12 and (morning or re.search(r"\bnight\b", text, re.I)):
            hour = 0  # "at 12 at night", "at 12 in the morning": midnight
        elif later and not morning and hour < 12:
            hour += 12
        elif not morning and not later and hour in AFTERNOON_HOURS:
            hour += 12
        return f"at {hour:02d}:00"

    said = _BARE_HOUR.sub(timed, text)
    return _PART_OF_DAY.sub("", said) if said != text else text


_ORDINAL_DAY = re.compile(r"\b(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)\b", re.I)
_MONTH_NAMED = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b|\d{1,2}[/.-]\d", re.I
)


def _days(text: str, now: datetime) -> str:
    """``text`` with a day of the month said alone ("on the 10th") in its month: this one when
    the day is still to come, else the next (dateparser reads "10th" as October).
    """  # noqa: D205
    found = _ORDINAL_DAY.search(text)
    named = _MONTH_NAMED.search(text) or re.search(r"\bmonth\b", text, re.I)
    if found is None or named or not 1 <= int(found.group(1)) <= 31:
        return text
    day, month = int(found.group(1)), now.date().replace(day=1)
    while day < now.day and month.month == now.month or not _has_day(month, day):
        month = (month.replace(day=28) + timedelta(days=4)).replace(day=1)
    return f"{text[: found.start()]}{month:%B} {day}, {month.year}{text[found.end() :]}"


def _has_day(month: date, day: int) -> bool:
    try:
        month.replace(day=day)
    except ValueError:
        return False
    return True


def _soonest(words: str, when: When) -> tuple[str, datetime, str]:
    """``words`` read as the soonest time they can mean that is not over: this one ("friday" on
    a Friday is today, "december" in December this one) when it is not, else the coming one.
    """  # noqa: D205
    text, moment, period = _parsed(words, when, "current_period")
    over = moment.date() < when.today if period not in TIMED else moment < when.now - GRACE
    if period in ("week", "month", "year"):
        over = False  # "this week", "december": the one under way
    return _parsed(words, when) if over else (text, moment, period)


def _parsed(words: str, when: When, prefer: str = "future") -> tuple[str, datetime, str]:
    """``words`` (trimmed) read as a moment in the person's zone, and dateparser's period of it
    ("time", "day", "week", "month"). Raises ``FieldError`` with a question when they name none
    or one too far off.

    dateparser reads the words as a wall-clock time, counted from the person's wall clock now;
    the zone is put on after, by ``zoneinfo``, so that a day across a change of summer time keeps
    its hour (words with a zone of their own, "5pm UTC", keep theirs). ``prefer``: dateparser's
    ``PREFER_DATES_FROM`` ("future": the coming friday; "current_period": this december).
    """  # noqa: D205
    text = " ".join(str(words).split())
    if len(text) > DUE_WORDS_MAX_CHARS:
        raise FieldError("unclear_date", "That is too long for a date: which day do you mean?")
    local_now = when.now.astimezone(when.zone)
    settings = {"PREFER_DATES_FROM": prefer, "RELATIVE_BASE": local_now.replace(tzinfo=None)}
    said = _days(LEADING.sub("", _hours(text)), local_now)
    found = _parser(settings).get_date_data(said)
    moment = found.date_obj
    if moment is None:
        raise FieldError(
            "unclear_date",
            f"Which day do you mean by “{text}”? Say a day, with a time if you like "
            "(“friday”, “tomorrow at 5pm”, “in 2 hours”).",
        )
    if abs(moment.year - local_now.year) > YEARS_AHEAD:
        raise FieldError("unclear_date", f"“{text}” is too far off: which day do you mean?")
    moment = moment.replace(tzinfo=when.zone) if moment.tzinfo is None else moment
    return text, moment.astimezone(when.zone), found.period


YEARS_AHEAD = 100
"""The furthest a date may be from now, in years (a year 9999 cannot be shown in every zone)."""


def read_due(words: str, when: When) -> dict[str, Any]:
    """``words`` as ``due_date`` (the day, in the person's zone) and ``due_at`` (the moment, UTC,
    when the words name a time of day; else None). Empty words: no date.
    """  # noqa: D205
    if not str(words).strip():
        return {"due_date": None, "due_at": None}
    text, moment, period = _soonest(words, when)
    timed = period in TIMED
    day = moment.date()
    local_now = when.now.astimezone(when.zone)
    if (timed and moment < local_now - GRACE) or (not timed and day < when.today):
        said = day_words(day) + (f" {moment:%H:%M}" if timed else "")
        raise FieldError(
            "date_in_past", f"“{text}” is {said}, which has passed. When should it be due?"
        )
    return {"due_date": day.isoformat(), "due_at": moment.astimezone(UTC) if timed else None}


OVERDUE_WORDS = frozenset({"overdue", "late", "past due", "behind", "missed"})
"""What a person calls the tasks past their time, as a ``due`` filter of the list."""


def due_days(words: str, when: When) -> tuple[date, date] | None:
    """The days a ``due`` filter of the list names, from the first to the one after the last:
    a day ("today", "friday"), a week ("this week", "next week"), a month ("december"); None
    for the tasks past their time ("overdue"). Raises ``FieldError`` with a question.
    """  # noqa: D205
    text = " ".join(str(words).split()).casefold()
    if text in OVERDUE_WORDS:
        return None
    _, moment, period = _soonest("this week" if text == "week" else text, when)
    first = moment.date()
    if period == "week":
        return first, first + timedelta(days=7)
    if period == "month":
        start = first.replace(day=1)
        return start, (start + timedelta(days=32)).replace(day=1)
    if period == "year":
        return first.replace(month=1, day=1), first.replace(year=first.year + 1, month=1, day=1)
    return first, first + timedelta(days=1)


def day_words(day: date) -> str:
    """A day as a task line says it: "Fri 4 Dec 2026"."""
    return f"{day:%a} {day.day} {day:%b %Y}"


# --- repeat ----------------------------------------------------------------------------------

REPEAT_WORDS_MAX_CHARS = 100


def read_repeat(words: str, when: When) -> dict[str, Any]:
    """How often a task repeats, from words ("every monday", "every other week", "daily at 9am"):
    ``repeat_rule``, an iCalendar RRULE read by ``recurrent`` in the person's zone, and
    ``repeat_words``, the words as said; empty words: it does not repeat. Raises ``FieldError``.
    """  # noqa: D205
    text = " ".join(str(words).split())
    if not text or text.casefold() in NEVER:
        return {"repeat_rule": None, "repeat_words": None}
    if len(text) > REPEAT_WORDS_MAX_CHARS:
        raise FieldError("unclear_repeat", "That is too long: how often should it repeat?")
    from recurrent.event_parser import RecurringEvent

    local_now = when.now.astimezone(when.zone).replace(tzinfo=None)
    with warnings.catch_warnings():  # parsedatetime's notice of its own next version, to recurrent
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        event = RecurringEvent(now_date=local_now)
        rule = event.parse(text)
    if not event.is_recurring or not isinstance(rule, str) or "FREQ=" not in rule:
        raise FieldError(
            "unclear_repeat",
            f"How often do you mean by “{text[:60]}”? Say it as “every monday”, “every other "
            "week” or “daily at 9am”.",
        )
    return {"repeat_rule": rule.removeprefix("RRULE:"), "repeat_words": text}


NEVER = frozenset({"never", "none", "no", "not", "once", "no repeat", "don't repeat"})
"""Words that say a task does not repeat (its repeat taken away)."""


def next_time(
    rule: str, after: datetime, zone: ZoneInfo, inclusive: bool = False
) -> tuple[date, datetime | None]:
    """The first time ``rule`` (an RRULE, read in ``zone``) falls after ``after`` (or on it, with
    ``inclusive``: a task made on a Monday to repeat every Monday is due today): its day, and its
    moment (UTC) when the rule names a time of day.
    """  # noqa: D205
    from dateutil.rrule import rrulestr

    local = after.astimezone(zone).replace(tzinfo=None, second=0, microsecond=0)
    timed = "BYHOUR=" in rule
    start = local if timed else local.replace(hour=0, minute=0)
    found = rrulestr(rule, dtstart=start).after(local if timed else start, inc=inclusive)
    if found is None:  # a rule that has ended: no time after
        raise FieldError("unclear_repeat", "That repeat has no time left to fall on.")
    moment = found.replace(tzinfo=zone)
    return moment.date(), moment.astimezone(UTC) if timed else None


zone_named("UTC")
zone_named(local_zone())  # read here, on import, never first in an event loop
