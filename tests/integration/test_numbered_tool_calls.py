"""A provider that numbers its tool calls (the same id in every answer) against a real `keel serve`:
each call runs and is logged, in every conversation and turn."""

import httpx

from tests.integration.server import keel_server_with_model


def test_repeated_call_ids_from_the_model_never_answer_one_call_with_anothers_result(tmp_path):
    with keel_server_with_model(f"sqlite:///{tmp_path / 'keel.db'}") as (server, stub):
        plan = [("one", "apples"), ("two", "pears"), ("one", "plums")]
        cids = {
            name: httpx.post(f"{server.url}/v1/conversations", json={}).json()["conversation_id"]
            for name in ("one", "two")
        }
        for conversation, fruit in plan:
            if conversation == "one" and fruit == "apples" or conversation == "two":
                stub.reply(fruit.title())  # a new topic's title
            stub.reply(tool_calls=[{"name": "create_todo_task", "args": {"title": fruit}}])
            stub.reply(f"Added {fruit}.\nKEEL DONE: added")
            answer = httpx.post(
                f"{server.url}/v1/conversations/{cids[conversation]}/messages",
                json={"content": f"Add {fruit}"},
                timeout=60,
            ).json()
            assert answer["tool_calls"][0]["result"]["title"] == fruit, answer
        ids = {
            c["id"] for r in stub.requests for m in r["messages"] for c in m.get("tool_calls", [])
        }
        assert ids == {"call_0_create_todo_task"}  # the provider gave every call the same id
        titles = [t["title"] for t in httpx.get(f"{server.url}/v1/tasks").json()]
        assert titles == ["apples", "pears", "plums"]
        for conversation, fruits in (("one", ["apples", "plums"]), ("two", ["pears"])):
            log = httpx.get(f"{server.url}/v1/conversations/{cids[conversation]}/messages").json()
            tools = [m["content"] for m in log if m["role"] == "tool"]
            assert [fruit in text for text, fruit in zip(tools, fruits, strict=True)] == [
                True
            ] * len(fruits)
