"""Conversations over real HTTP: renamed, found by words in them a page at a time, deleted.

The name a conversation is given is its title in the list for every client; searching matches
the name and what the user and keel wrote; another user's conversations are never found.
"""

import httpx
import pytest

from tests.integration.conftest import ANN, BOB


@pytest.fixture
def http(server_url):
    with httpx.Client(base_url=server_url.url, timeout=60) as client:
        yield client


def new_conversation(http: httpx.Client, *messages: str, headers=ANN) -> str:
    cid = http.post("/v1/conversations", json={}, headers=headers).json()["conversation_id"]
    for text in messages:
        assert (
            http.post(
                f"/v1/conversations/{cid}/messages", json={"content": text}, headers=headers
            ).status_code
            == 200
        )
    return cid


def listed(http: httpx.Client, headers=ANN, **query) -> list[dict]:
    answer = http.get("/v1/conversations", params=query, headers=headers)
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_a_renamed_conversation_is_listed_by_its_new_name_and_can_be_unnamed(http) -> None:
    cid = new_conversation(http, "Add call the plumber about the kitchen sink")
    renamed = http.patch(f"/v1/conversations/{cid}", json={"name": "  House   jobs "}, headers=ANN)
    assert renamed.status_code == 200
    assert renamed.json()["title"] == "House jobs"
    entry = next(c for c in listed(http) if c["conversation_id"] == cid)
    assert (entry["title"], entry["name"]) == ("House jobs", "House jobs")
    http.patch(f"/v1/conversations/{cid}", json={"name": None}, headers=ANN)
    entry = next(c for c in listed(http) if c["conversation_id"] == cid)
    assert entry["title"] == "Add call the plumber about the kitchen sink"
    assert entry["name"] is None


def test_renaming_another_users_conversation_or_a_too_long_name_is_refused(http) -> None:
    cid = new_conversation(http)
    other = http.patch(f"/v1/conversations/{cid}", json={"name": "x"}, headers=BOB)
    assert other.status_code == 404
    too_long = http.patch(f"/v1/conversations/{cid}", json={"name": "x" * 201}, headers=ANN)
    assert too_long.status_code == 422


def test_search_finds_words_in_names_and_messages_of_the_callers_own_only(http) -> None:
    by_message = new_conversation(http, "Add water the Ficus_tree 100%")
    by_reply = new_conversation(http, "Add xylophone lesson")
    by_name = new_conversation(http)
    http.patch(f"/v1/conversations/{by_name}", json={"name": "Ficus care"}, headers=ANN)
    new_conversation(http, "Add water the ficus too", headers=BOB)
    found = {c["conversation_id"] for c in listed(http, q="FICUS")}
    assert found == {by_message, by_name}
    assert {c["conversation_id"] for c in listed(http, q="ficus_tree 100%")} == {by_message}
    assert listed(http, q="ficusXtree") == []  # _ is a letter here, not a wildcard
    assert by_reply in {c["conversation_id"] for c in listed(http, q="created task: xylophone")}


def test_the_list_comes_a_page_at_a_time_with_a_link_to_the_next(http) -> None:
    for _ in range(3):
        new_conversation(http, "Add paged zebra task")
    first = http.get("/v1/conversations", params={"q": "zebra", "limit": 2}, headers=ANN)
    assert len(first.json()) == 2
    following = first.links["next"]["url"]
    second = http.get(following, headers=ANN)
    assert len(second.json()) >= 1 and "next" not in second.links
    ids = [c["conversation_id"] for c in first.json() + second.json()]
    assert len(ids) == len(set(ids))
    assert http.get("/v1/conversations", params={"q": "x" * 201}, headers=ANN).status_code == 422


def test_a_deleted_conversation_is_no_longer_found(http) -> None:
    cid = new_conversation(http, "Add a quokka photo")
    assert http.delete(f"/v1/conversations/{cid}", headers=ANN).status_code == 204
    assert listed(http, q="quokka") == []
