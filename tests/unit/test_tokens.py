"""Token counting on a closed network: tiktoken's encoding is read from its cache or not at all."""

import socket

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from keel.nodes.models import tokens
from keel.nodes.models.tokens import cached_file, count_tokens, estimate_tokens

MESSAGES = [HumanMessage("Add buy milk and call mom"), AIMessage("Created task: buy milk")]


@pytest.fixture
def closed_network(monkeypatch, tmp_path):
    """No encoding cached, and any connection attempt recorded and refused."""
    attempts: list[object] = []

    def refuse(self, address):
        attempts.append(address)
        raise OSError("no network")

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(socket.socket, "connect", refuse)
    tokens._encoding.cache_clear()
    yield attempts
    tokens._encoding.cache_clear()


def test_without_a_cached_encoding_the_estimate_counts_and_nothing_is_fetched(closed_network):
    for _ in range(3):  # decided once: the second count does not look again
        assert count_tokens(MESSAGES, "gpt-4o-mini") == estimate_tokens(MESSAGES)
    assert closed_network == []
    assert tokens._encoding.cache_info().misses == 1


def test_the_cache_file_is_where_tiktoken_keeps_it(monkeypatch, tmp_path):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    # tiktoken names the file by the SHA-1 of the address it fetches the encoding from
    assert cached_file("o200k_base") == tmp_path / "fb374d419588a4632f3f557e76b4b70aebbca790"
