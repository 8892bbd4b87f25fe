"""A shift nobody announces and a return, as people meet them: over HTTP to a real `keel serve`
(SQLite and PostgreSQL) and in `keel chat --verbose`, with the offline model."""

import httpx

from keel.nodes.support.topic_names import topic_title
from keel.tools.tasks.todo import TODO_TOOLS
from tests.integration.conftest import ANN
from tests.integration.test_api import new_conversation, say
from tests.integration.test_chat_cli import chat

PUPPY = "Do you know a good way to stop a puppy chewing shoes?"
CHEWS = "She ignores her chew toys and goes for my sneakers."
MUSIC = "What kind of music do you listen to while you work?"
BACK = "Anyway, back to the puppy: would a crate at night help?"


def topic_changes(answer):
    return [e["data"] for e in answer["events"] if e["type"] == "topic_changed"]


def test_an_unannounced_shift_and_a_return_over_http(server_url):
    cid = new_conversation(server_url)
    say(server_url, cid, "Add buy milk")
    assert topic_changes(say(server_url, cid, "What's on my list?").json()) == []
    [puppy] = topic_changes(say(server_url, cid, PUPPY).json())
    assert puppy["reason"] == "semantic"
    assert topic_changes(say(server_url, cid, CHEWS).json()) == []
    [music] = topic_changes(say(server_url, cid, MUSIC).json())
    assert music["reason"] == "semantic" and music["previous_topic_id"] == puppy["new_topic_id"]
    [back] = topic_changes(say(server_url, cid, BACK).json())
    assert back["reason"] == "returned" and back["new_topic_id"] == puppy["new_topic_id"]
    state = httpx.get(f"{server_url.url}/v1/conversations/{cid}", headers=ANN).json()
    active = [t for t in state["topics"] if t["is_active"]]
    assert [t["id"] for t in active] == [puppy["new_topic_id"]] and len(state["topics"]) == 3


def test_keel_chat_shows_the_return(tmp_path):
    result = chat(tmp_path, ["Add buy milk", PUPPY, CHEWS, MUSIC, BACK], "--verbose")
    assert result.returncode == 0, result.stderr
    assert f"New topic: {topic_title(MUSIC, TODO_TOOLS)}" in result.stdout  # a few words of it
    assert f"Back to the topic: {topic_title(PUPPY, TODO_TOOLS)}" in result.stdout
