"""What text is stored as it is, cleaned, or refused; and how a search's words are read."""

import pytest

from keel.checkpoints.conversation_store import (
    MAX_SEARCH_WORDS,
    ConversationStore,
    TooManyWords,
    search_words,
)
from keel.checkpoints.text_rules import UnstorableText, one_line, storable
from keel.tools.tasks.store import TaskError, TaskStore
from tests.helpers import open_database


@pytest.mark.parametrize(
    ("typed", "stored"),
    [
        ("buy  milk", "buy milk"),
        ("buy\tmilk\r\nnow ", "buy milk now"),
        ("\u202egnp.exe", "gnp.exe"),
        ("\u2066left\u2069 \u200fright", "left right"),
        ("\x1b[1;31mred\x1b[0m alert", "red alert"),
        ("\x9b2Jcleared", "cleared"),
        ("ring\x07 the \x1bbell\x7f", "ring the bell"),
        ("a \x01 b", "a b"),
        ("Äpfel für 👩\u200d💻", "Äpfel für 👩\u200d💻"),
        ("\x1b\x07\u202e", ""),
    ],
)
def test_a_name_or_title_keeps_what_shows_on_one_line(typed: str, stored: str) -> None:
    assert one_line(typed) == stored


@pytest.mark.parametrize(("text", "says"), [("a\x00b", "NUL"), ("a\ud800", "surrogate")])
def test_text_a_database_cannot_hold_is_refused(text: str, says: str) -> None:
    with pytest.raises(UnstorableText, match=says):
        storable(text)
    with pytest.raises(UnstorableText, match=says):
        one_line(text)


def test_storable_text_is_kept_as_it_is() -> None:
    assert storable("line\none\x1b") == "line\none\x1b"


def test_a_search_reads_each_different_word_once_up_to_the_most() -> None:
    assert search_words("  milk Milk milk  tea ") == ["milk", "Milk", "tea"]
    assert search_words(None) == search_words("   ") == []
    assert len(search_words(" ".join(["w"] * 50))) == 1
    with pytest.raises(TooManyWords, match=str(MAX_SEARCH_WORDS)):
        search_words(" ".join(f"w{n}" for n in range(MAX_SEARCH_WORDS + 1)))


async def test_a_task_title_is_stored_cleaned_or_refused(database_url) -> None:
    async with open_database(database_url) as db:
        store = TaskStore(db)
        task = await store.create("ann", "\u202egnp.exe\x07\nnow")
        assert task["title"] == "gnp.exe now"
        renamed = await store.rename("ann", task["id"], "\x1b[32mgreen\x1b[0m tea")
        assert renamed["title"] == "green tea"
        for refused, says in [("a\x00b", "NUL"), ("\x1b\u202e", "empty")]:
            with pytest.raises(TaskError, match=says):
                await store.create("ann", refused)


async def test_a_conversation_name_is_stored_cleaned(database_url) -> None:
    async with open_database(database_url) as db:
        conversations = ConversationStore(db)
        cid = (await conversations.create("ann"))["conversation_id"]
        await conversations.rename(cid, "\x1b[31mHouse\x1b[0m\tjobs\u202e")
        listed = await conversations.listed(cid, "ann")
        assert listed is not None and listed["name"] == listed["title"] == "House jobs"
        await conversations.rename(cid, "\x07\u202e")
        listed = await conversations.listed(cid, "ann")
        assert listed is not None and listed["name"] is None
