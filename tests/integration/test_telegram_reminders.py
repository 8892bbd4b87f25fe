"""Reminders in Telegram: `keel telegram` against a local Bot API stand-in says a reminder in the
chat it was set from, once (through a 429), with Done / Snooze / Tomorrow buttons that work.
"""

from __future__ import annotations

import re

import pytest

from tests.integration.test_telegram import ANN, BOB, Person, telegram_bot
from tests.stub_telegram import too_many_requests

BUTTONS = ["Done", "Snooze 10 min", "Tomorrow"]


@pytest.fixture
def bot(tmp_path):
    with telegram_bot(f"sqlite:///{tmp_path / 'keel.db'}") as pair:
        yield pair


def reminders_in(stub, chat_id: int) -> list[dict]:
    return [m for m in stub.replies(chat_id) if m["text"].startswith("⏰ Reminder")]


def test_a_reminder_reaches_its_chat_once_and_its_buttons_work(bot):
    process, stub = bot
    ann, bob = Person(stub, ANN), Person(stub, BOB)
    bob.says("Add fix the bike")
    set_ = ann.says("remind me in 2 seconds to check the laundry")
    assert set_["text"].startswith("Created task: check the laundry (due ")
    stub.fail("sendMessage", too_many_requests(1))  # Telegram asks to wait: waited, not doubled
    reminder = stub.wait(lambda: reminders_in(stub, ANN))[0]
    assert reminder["text"] == "⏰ Reminder: check the laundry (task 1)."
    assert [label for label, _ in reminder["buttons"][0]] == BUTTONS
    snoozed = ann.presses(reminder, "Snooze 10 min")
    assert re.fullmatch(r"I'll remind you again at \d\d:\d\d\.", snoozed["text"])
    assert reminder["buttons"] == []  # taken off

    ann.says("remind me in 2 seconds to feed the cat")
    fed = stub.wait(lambda: [m for m in reminders_in(stub, ANN) if "feed the cat" in m["text"]])[0]
    done = ann.presses(fed, "Done")
    assert "feed the cat" in done["text"] and "omplete" in done["text"]
    assert "[x] 2. feed the cat" in ann.says("What's on my list?")["text"]

    ann.says("remind me in 2 seconds to water the plants")
    plants = stub.wait(lambda: [m for m in reminders_in(stub, ANN) if "plants" in m["text"]])[0]
    later = ann.presses(plants, "Tomorrow")
    assert re.fullmatch(r"I'll remind you again at \w{3} 09:00\.", later["text"])

    assert len(reminders_in(stub, ANN)) == 3
    assert reminders_in(stub, BOB) == []  # never another person's chat
