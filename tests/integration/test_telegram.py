"""`keel telegram` as a real process against a local Bot API server: what people in Telegram see."""

from __future__ import annotations

import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO

import pytest

from tests.conftest import postgres_cluster
from tests.integration.server import stop
from tests.keel_process import KEEL, ROOT, keel_env
from tests.stub_telegram import BAD_GATEWAY, StubTelegram, too_many_requests

ANN, BOB = 1001, 1002
GROUP = -5005


@dataclass
class BotProcess:
    database_url: str
    stub: StubTelegram
    env: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen[str] | None = None
    output: IO[str] = field(default_factory=lambda: tempfile.TemporaryFile(mode="w+"))

    def start(self) -> None:
        self.process = subprocess.Popen(
            [*KEEL, "telegram"],
            stdout=self.output,
            stderr=subprocess.STDOUT,
            text=True,
            env=keel_env(
                self.database_url,
                KEEL_TELEGRAM_TOKEN=self.stub.token,
                KEEL_TELEGRAM_API_URL=self.stub.url,
                KEEL_LOG_FORMAT="json",
                **self.env,
            ),
            cwd=ROOT,
        )

    def stop(self) -> None:
        if self.process is not None:
            stop(self.process)
            self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def logs(self) -> str:
        self.output.seek(0)
        return self.output.read()


@contextmanager
def telegram_bot(database_url: str, **env: str) -> Iterator[tuple[BotProcess, StubTelegram]]:
    with StubTelegram() as stub:
        bot = BotProcess(database_url, stub, env)
        bot.start()
        try:
            yield bot, stub
        finally:
            bot.stop()
            logs = bot.logs()
            bot.output.close()
            assert stub.token not in logs, "the token was logged"
            assert "stub-secret-token" not in logs


@pytest.fixture
def bot(tmp_path):
    with telegram_bot(f"sqlite:///{tmp_path / 'keel.db'}") as pair:
        yield pair


class Person:
    """Someone chatting with the bot: what they say and the replies they get."""

    def __init__(self, stub: StubTelegram, user: int, chat_id: int | None = None) -> None:
        self.stub, self.user = stub, user
        self.chat_id = chat_id if chat_id is not None else user

    def says(self, text: str) -> dict:
        seen = len(self.stub.replies(self.chat_id))
        self.stub.say(self.user, text, self.chat_id)
        return self.stub.next_reply(self.chat_id, seen)

    def presses(self, message: dict, label: str) -> dict:
        seen = len(self.stub.replies(self.chat_id))
        self.stub.press(self.user, message, label)
        return self.stub.next_reply(self.chat_id, seen)


def test_the_readme_flow_in_telegram(bot):
    process, stub = bot
    ann = Person(stub, ANN)
    start = ann.says("/start")
    assert "todo assistant" in start["text"] and len(start["text"].splitlines()) == 2
    commands = stub.wait(lambda: stub.called("setMyCommands"))[0]["commands"]
    assert [c["command"] for c in commands] == ["start", "help", "reset", "state", "new", "topics"]
    assert stub.called("deleteWebhook")
    assert ann.says("Add buy milk")["text"] == "Created task: buy milk"
    assert stub.wait(lambda: [a for a in stub.actions if a["action"] == "typing"])
    assert "buy milk" in ann.says("What's on my list?")["text"]
    question = ann.says("Delete task 1")
    assert question["text"] == (
        "Are you sure you want to delete task 1? (yes/no)\nDelete task 1 - buy milk"
    )
    assert [label for label, _ in question["buttons"][0]] == ["Yes", "No"]
    done = ann.presses(question, "Yes")
    assert "Deleted task 1" in done["text"]
    assert stub.answers and "text" not in stub.answers[-1]
    assert question["buttons"] == []  # taken off
    assert ann.says("What's on my list?")["text"] == "Your list is empty."
    assert all(m["parse_mode"] is None for m in stub.sent)


def test_reset_state_new_and_topics(bot):
    process, stub = bot
    ann = Person(stub, ANN)
    ann.says("Add buy milk")
    state = ann.says("/state")["text"]
    assert "Mission: Add buy milk" in state and "No question is waiting." in state
    reset = ann.says("/reset")["text"]
    assert "Conversation context has been reset" in reset
    assert "Previous messages are preserved" in reset
    assert reset.endswith("What would you like to discuss?")
    assert "Mission: none" in ann.says("/state")["text"]
    assert "buy milk" in ann.says("What's on my list?")["text"]  # tasks stay; context is fresh
    topics = ann.says("/topics")
    assert "Add buy milk" in topics["text"] and "(current)" in topics["text"]
    back = ann.presses(topics, next(t for row in topics["buttons"] for t, _ in row))
    assert back["text"]
    assert topics["buttons"] == []
    assert "Topic: Add buy milk" in ann.says("/state")["text"]
    fresh = ann.says("/new")["text"]
    assert "new conversation" in fresh.lower()
    assert "no topics yet" in ann.says("/topics")["text"]
    assert "don't know that command" in ann.says("/frobnicate")["text"]
    assert "/reset" in ann.says("/help")["text"]


def test_buttons_typed_answers_and_stale_buttons(bot):
    process, stub = bot
    ann = Person(stub, ANN)
    ann.says("Add buy milk")
    ann.says("Add call mom")
    first = ann.says("Delete task 1")
    cancelled = ann.says("no")  # typed: answers the question, its buttons go
    assert "Cancel" in cancelled["text"]
    stub.wait(lambda: first["buttons"] == [])
    answered = len(stub.answers)
    seen = len(stub.replies(ANN))
    stub.press_data(
        ANN, first, first["raw"]["reply_markup"]["inline_keyboard"][0][0]["callback_data"]
    )
    stub.wait(lambda: len(stub.answers) > answered)
    assert stub.answers[-1]["text"] == "This question has expired."
    assert "buy milk" in ann.says("What's on my list?")["text"]  # nothing was deleted
    assert len(stub.replies(ANN)) == seen + 1
    second = ann.says("Delete task 2")
    assert "Deleted task 2" in ann.says("yes")["text"]
    stub.wait(lambda: second["buttons"] == [])
    third = ann.says("Delete task 1")
    assert "Cancel" in ann.presses(third, "No")["text"]
    assert "buy milk" in ann.says("What's on my list?")["text"]


def test_two_users_and_a_group(bot):
    process, stub = bot
    ann, bob = Person(stub, ANN), Person(stub, BOB)
    ann.says("Add buy milk")
    bob.says("Add fix the bike")
    assert "buy milk" not in bob.says("What's on my list?")["text"]
    assert "fix the bike" not in ann.says("What's on my list?")["text"]
    ann_in_group, bob_in_group = Person(stub, ANN, GROUP), Person(stub, BOB, GROUP)
    seen = len(stub.replies(GROUP))
    asked = stub.say(ANN, "What's on my list?", GROUP)
    reply = stub.next_reply(GROUP, seen)
    assert reply["reply_to"] == asked and "buy milk" in reply["text"]
    question = ann_in_group.says("Delete task 1")
    answered = len(stub.answers)
    stub.press(BOB, question, "Yes")  # not Bob's question
    stub.wait(lambda: len(stub.answers) > answered)
    assert stub.answers[-1]["text"] == "This button is for someone else."
    assert question["buttons"]  # still Ann's to answer
    assert "fix the bike" in bob_in_group.says("What's on my list?")["text"]
    assert "Deleted task 1" in ann_in_group.presses(question, "Yes")["text"]
    seen = len(stub.replies(GROUP))
    stub.say(BOB, "/reset@another_bot", GROUP)  # for another bot: not answered
    reset = stub.say(BOB, "/reset@keel_test_bot", GROUP)
    reply = stub.next_reply(GROUP, seen)
    assert reply["reply_to"] == reset and "What would you like to discuss?" in reply["text"]


def test_a_restart_that_delivers_updates_again_doubles_nothing(bot):
    process, stub = bot
    ann = Person(stub, ANN)
    ann.says("Add buy milk")
    ann.says("Add call mom")
    process.stop()
    stub.forget_offset()  # Telegram delivers everything again
    sent = len(stub.sent)
    process.start()
    listing = ann.says("What's on my list?")["text"]
    assert listing.count("buy milk") == 1 and listing.count("call mom") == 1
    assert len(stub.sent) == sent + 1  # the old messages were not answered twice


def test_a_bot_killed_before_its_reply_went_out_answers_after_the_restart(bot):
    process, stub = bot
    ann = Person(stub, ANN)
    ann.says("/start")
    stub.fail("sendMessage", *[BAD_GATEWAY] * 20)  # the reply cannot get out
    stub.say(ANN, "Add tea")
    stub.wait(lambda: ("sendMessage", 502) in stub.refused)  # the turn ran; its reply is stuck
    process.process.kill()
    process.process.wait()
    stub.failures.clear()
    seen = len(stub.replies(ANN))
    process.start()  # Telegram delivers "Add tea" again: it was never confirmed
    assert stub.next_reply(ANN, seen)["text"] == "Created task: tea"
    assert ann.says("What's on my list?")["text"].count("tea") == 1


def test_rate_limits_and_network_errors_are_ridden_out(bot):
    process, stub = bot
    ann = Person(stub, ANN)
    ann.says("/start")
    stub.fail("getUpdates", BAD_GATEWAY, BAD_GATEWAY)
    stub.fail("sendMessage", too_many_requests(1), too_many_requests(1))
    reply = ann.says("Add buy milk")
    assert reply["text"] == "Created task: buy milk"
    assert ("sendMessage", 429) in stub.refused and ("getUpdates", 502) in stub.refused
    assert [m["text"] for m in stub.replies(ANN)].count("Created task: buy milk") == 1


def test_a_long_reply_is_split_at_lines_and_markdown_stays_as_typed(bot):
    process, stub = bot
    ann = Person(stub, ANN)
    title = "*bold* _under_ [link](http://x) `code` " + "x" * 300
    assert ann.says(f"Add {title}")["text"] == f"Created task: {title}"
    for n in range(14):
        ann.says(f"Add chore {n} " + "y" * 380)
    seen = len(stub.replies(ANN))
    stub.say(ANN, "What's on my list?")
    stub.wait(lambda: len(stub.replies(ANN)) >= seen + 2)
    parts = stub.replies(ANN)[seen:]
    assert all(len(p["text"]) <= 4096 for p in parts)
    joined = "\n".join(p["text"] for p in parts)
    assert title in joined and "chore 13" in joined
    assert all(p["parse_mode"] is None for p in parts)


def test_the_allow_list(tmp_path):
    with telegram_bot(f"sqlite:///{tmp_path / 'k.db'}", KEEL_TELEGRAM_ALLOWED_USERS=str(ANN)) as (
        _,
        stub,
    ):
        assert Person(stub, ANN).says("Add tea")["text"] == "Created task: tea"
        assert "answers only" in Person(stub, BOB).says("Add tea")["text"]


def _noted_answered(url: str, count: int) -> None:
    """Wait until the bot noted ``count`` messages answered (it notes each just after its reply)."""
    import psycopg

    for _ in range(200):
        with psycopg.connect(url) as conn:
            (noted,) = conn.execute("SELECT count(*) FROM keel_telegram_answered").fetchone()
        if noted >= count:
            return
        time.sleep(0.05)
    raise AssertionError(f"{count} answers never noted")


def test_on_postgresql_through_a_database_restart():
    with postgres_cluster() as cluster:
        with telegram_bot(cluster.url) as (process, stub):
            ann = Person(stub, ANN)
            assert ann.says("Add tea")["text"] == "Created task: tea"
            _noted_answered(cluster.url, 1)  # a restart before the note would send tea again
            cluster.restart()
            assert ann.says("Add coffee")["text"] == "Created task: coffee"
            listing = ann.says("What's on my list?")["text"]
            assert listing.count("tea") == 1 and listing.count("coffee") == 1


def test_webhook_mode_in_keel_serve(tmp_path):
    import httpx

    from tests.integration.server import keel_server
    from tests.keel_process import run_keel

    db = f"sqlite:///{tmp_path / 'keel.db'}"
    secret = "webhook-secret_1"
    with StubTelegram() as stub:
        env = {
            "KEEL_TELEGRAM_TOKEN": stub.token,
            "KEEL_TELEGRAM_API_URL": stub.url,
            "KEEL_TELEGRAM_WEBHOOK_SECRET": secret,
        }
        url = "https://keel.example/telegram/webhook"
        registered = run_keel(db, ["telegram", "--webhook", url], **env)
        assert registered.returncode == 0, registered.stderr
        hook = stub.called("setWebhook")[0]
        assert hook["url"] == url and hook["secret_token"] == secret
        assert stub.token not in registered.stdout + registered.stderr
        with keel_server(db, **env) as server:
            stub.say(ANN, "Add buy milk")
            update = stub.updates[-1]
            endpoint = f"{server.url}/telegram/webhook"
            refused = httpx.post(endpoint, json=update, timeout=60)
            assert refused.status_code == 401 and not stub.sent
            wrong = {"X-Telegram-Bot-Api-Secret-Token": "guess"}
            assert httpx.post(endpoint, json=update, headers=wrong, timeout=60).status_code == 401
            right = {"X-Telegram-Bot-Api-Secret-Token": secret}
            assert httpx.post(endpoint, json=update, headers=right, timeout=60).status_code == 200
            assert [m["text"] for m in stub.replies(ANN)] == ["Created task: buy milk"]
            again = httpx.post(endpoint, json=update, headers=right, timeout=60)
            assert again.status_code == 200  # Telegram sent it again: answered once
            assert len(stub.replies(ANN)) == 1


def test_webhook_path_is_not_found_without_the_settings(tmp_path):
    import httpx

    from tests.integration.server import keel_server

    with keel_server(f"sqlite:///{tmp_path / 'keel.db'}") as server:
        answer = httpx.post(f"{server.url}/telegram/webhook", json={"update_id": 1}, timeout=30)
        assert answer.status_code == 404
