"""`keel telegram` against a local Bot API server: every message answered once, and only real ones.

Telegram renumbers its updates after a week without any, delivers an update again until it is
confirmed, and can carry text that keel's HTTP API refuses; a forged update must not be answered.
"""

from __future__ import annotations

import pytest

from tests.conftest import database_url_for
from tests.integration.test_telegram import ANN, BOB, Person, telegram_bot


@pytest.fixture(params=["sqlite", "postgres"])
def any_url(request, tmp_path) -> str:
    return database_url_for(request.param, request, tmp_path)


def test_renumbered_updates_are_answered_and_redeliveries_are_not(any_url):
    with telegram_bot(any_url) as (process, stub):
        ann = Person(stub, ANN)
        assert ann.says("Add tea")["text"] == "Created task: tea"
        assert ann.says("Add coffee")["text"] == "Created task: coffee"
        stub.renumber(1)  # after a week without updates: lower ids, the very ids of before
        assert ann.says("Add milk")["text"] == "Created task: milk"
        assert "/reset" in ann.says("/help")["text"]
        process.stop()
        stub.forget_offset()  # Telegram delivers all four again
        sent = len(stub.sent)
        process.start()
        listing = ann.says("What's on my list?")["text"]
        assert [listing.count(t) for t in ("tea", "coffee", "milk")] == [1, 1, 1]
        assert len(stub.sent) == sent + 1  # none of the four was answered twice


def test_text_the_http_api_refuses_gets_a_reply_saying_why(any_url):
    with telegram_bot(any_url, KEEL_MAX_MESSAGE_CHARS="2000") as (process, stub):
        ann = Person(stub, ANN)
        too_long = ann.says("Add " + "x" * 500_000)["text"]
        assert "500004 characters" in too_long and "limit is 2000" in too_long
        assert "NUL" in ann.says("Add tea\x00 with milk")["text"]
        assert "surrogate" in ann.says("Add tea \ud800")["text"]
        assert ann.says("What's on my list?")["text"] == "Your list is empty."
        assert ann.says("Add tea")["text"] == "Created task: tea"  # nothing else was lost
        assert len(stub.replies(ANN)) == 5
        assert "telegram_update_failed" not in process.logs()


def test_a_forged_private_chat_update_is_refused_in_silence(tmp_path):
    with telegram_bot(f"sqlite:///{tmp_path / 'keel.db'}") as (process, stub):
        stub.say(BOB, "Add forged task", ANN)  # from Bob, into Ann's private chat
        ann = Person(stub, ANN)
        assert ann.says("What's on my list?")["text"] == "Your list is empty."
        assert [m["text"] for m in stub.replies(ANN)] == ["Your list is empty."]
        assert "telegram_forged_update" in process.logs()
