"""Odd text over real HTTP, on SQLite and PostgreSQL alike: NULs refused, controls dropped, search.

A NUL (which PostgreSQL cannot store) in any text that reaches the database is a 422 naming the
field; control characters and direction overrides are dropped from names and task titles; search
finds every word of the query in any order and any case, in any script.
"""

import httpx
import pytest

from tests.integration.conftest import ANN


@pytest.fixture
def http(server_url):
    with httpx.Client(base_url=server_url.url, headers=ANN, timeout=60) as client:
        yield client


def new_conversation(http: httpx.Client, *messages: str) -> str:
    cid = http.post("/v1/conversations", json={}).json()["conversation_id"]
    for text in messages:
        answer = http.post(f"/v1/conversations/{cid}/messages", json={"content": text})
        assert answer.status_code == 200, answer.text
    return cid


def found(http: httpx.Client, q: str) -> set[str]:
    answer = http.get("/v1/conversations", params={"q": q})
    assert answer.status_code == 200, answer.text
    return {c["conversation_id"] for c in answer.json()}


def assert_refused(answer: httpx.Response, field: str, what: str = "NUL") -> None:
    assert answer.status_code == 422, answer.text
    error = answer.json()["error"]
    assert error["code"] == "invalid_request"
    assert field in error["message"] and what in error["message"], error


def test_a_nul_in_any_text_that_reaches_the_database_is_a_422(http) -> None:
    cid = new_conversation(http, "Add buy milk")
    base = f"/v1/conversations/{cid}"
    message = http.get(f"{base}/messages").json()[0]
    nul = "1f0c\x00"
    assert_refused(http.patch(base, json={"name": "House\x00jobs"}), "name")
    assert_refused(http.get("/v1/conversations", params={"q": "milk\x00"}), "q")
    sent = {"content": "Add tea", "checkpoint_id": nul}
    assert_refused(http.post(f"{base}/messages", json=sent), "checkpoint_id")
    streamed = http.post(f"{base}/messages", json=sent, headers={"Accept": "text/event-stream"})
    assert_refused(streamed, "checkpoint_id")
    at = {"checkpoint_id": nul}
    assert_refused(http.get(f"{base}/messages", params=at), "checkpoint_id")
    assert_refused(http.get(base, params=at), "checkpoint_id")
    assert_refused(
        http.get(f"{base}/messages/{message['id']}/branches", params=at), "checkpoint_id"
    )
    assert_refused(http.post(f"{base}/topics/topic%00/reopen"), "topic_id")
    assert http.get("/web/app%00.js").status_code == 404
    assert http.get(f"{base}/messages").json()[0]["content"] == "Add buy milk"
    assert http.get(base).status_code == 200  # the conversation reads as before


def test_a_lone_surrogate_in_a_name_is_a_422(http) -> None:
    cid = new_conversation(http)
    answer = http.patch(
        f"/v1/conversations/{cid}",
        content=b'{"name": "House \\ud800"}',
        headers={"Content-Type": "application/json"},
    )
    assert_refused(answer, "name", "unicode")


def test_control_characters_are_dropped_from_names_and_task_titles(http) -> None:
    cid = new_conversation(http)
    named = http.patch(
        f"/v1/conversations/{cid}", json={"name": "\x1b[31mHouse\x1b[0m\tjobs\x07\u202e\n"}
    )
    assert named.status_code == 200, named.text
    assert (named.json()["name"], named.json()["title"]) == ("House jobs", "House jobs")
    new_conversation(http, "Add \u202egnp.exe\x07 now")
    titles = [t["title"] for t in http.get("/v1/tasks").json()]
    assert any(t.startswith("gnp.exe") for t in titles), titles
    assert not any(c in t for t in titles for c in "\u202e\x07\x1b")


def test_search_finds_every_word_in_any_order_case_and_script(http) -> None:
    apples = new_conversation(http, "Add buy Äpfel")
    milk = new_conversation(http, "Add купить МОЛОКО")
    named = new_conversation(http)
    http.patch(f"/v1/conversations/{named}", json={"name": "Ωμέγα Plans"})
    assert apples in found(http, "äpfel")
    assert apples in found(http, "ÄPFEL buy")
    assert apples not in found(http, "äpfel quokka")
    assert milk in found(http, "молоко Купить")
    assert found(http, "ωμέγα plans") == {named}
    assert found(http, "plans ΩΜΈΓΑ") == {named}


def test_a_search_for_too_many_words_is_a_422(http) -> None:
    answer = http.get("/v1/conversations", params={"q": " ".join(f"w{n}" for n in range(11))})
    assert_refused(answer, "q", "words")
