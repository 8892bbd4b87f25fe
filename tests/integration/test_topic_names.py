"""Topics over real HTTP: named by a few words of their first message, a reset's topic by the
first message after it, and summed up as what was asked and done.
"""

import httpx
import pytest

from tests.integration.conftest import ANN


@pytest.fixture
def conversation(server_url):
    with httpx.Client(base_url=server_url.url, timeout=60, headers=ANN) as http:
        cid = http.post("/v1/conversations", json={}).json()["conversation_id"]
        yield http, cid


def say(http: httpx.Client, cid: str, text: str) -> dict:
    answer = http.post(f"/v1/conversations/{cid}/messages", json={"content": text})
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_a_reset_topic_is_named_by_the_first_message_after_it(conversation) -> None:
    http, cid = conversation
    say(http, cid, "Add buy milk and bread for the weekend breakfast")
    say(http, cid, "Delete task 1")
    say(http, cid, "yes")
    assert http.post(f"/v1/conversations/{cid}/reset").status_code == 200
    result = say(http, cid, "Add walk the dog")
    assert result["topic"]["title"] == "Add walk the dog"
    topics = http.get(f"/v1/conversations/{cid}").json()["topics"]
    assert [t["title"] for t in topics] == ["Add buy milk and bread", "Add walk the dog"]
    summary = topics[0]["summary"]
    assert summary.startswith(
        "Asked: Add buy milk and bread for the weekend breakfast; Delete task 1. Done: "
    )
    assert "Deleted task 1" in summary
    assert "Are you sure" not in summary and "Last exchange" not in summary
