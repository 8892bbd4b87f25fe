"""Token counting on a closed network: tiktoken's encoding is read from its cache or not at all."""

import socket

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from keel.graphs.settings import Settings
from keel.nodes.models.tokens import cached_file, count_tokens, estimate_tokens, load_encoding

MESSAGES = [HumanMessage("Add buy milk and call mom"), AIMessage("Created task: buy milk")]


@pytest.fixture
def closed_network(monkeypatch, tmp_path):
    """An empty tiktoken cache, and any connection attempt recorded and refused."""
    attempts: list[object] = []

    def refuse(self, address):
        attempts.append(address)
        raise OSError("no network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    load_encoding.cache_clear()
    yield str(tmp_path), attempts
    load_encoding.cache_clear()


def test_without_a_cached_encoding_the_estimate_counts_and_nothing_is_fetched(closed_network):
    cache_dir, attempts = closed_network
    for _ in range(3):  # decided once: the second opening does not look again
        assert not load_encoding("gpt-4o-mini", cache_dir)
        assert count_tokens(MESSAGES, "gpt-4o-mini") == estimate_tokens(MESSAGES)
    assert attempts == []
    assert load_encoding.cache_info().misses == 1


def test_the_cache_file_is_where_tiktoken_keeps_it(tmp_path, monkeypatch):
    # tiktoken names the file by the SHA-1 of the address it fetches the encoding from
    named = "fb374d419588a4632f3f557e76b4b70aebbca790"
    assert cached_file("o200k_base", str(tmp_path)) == tmp_path / named
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    assert Settings().tiktoken_cache_dir == str(tmp_path)  # the variable tiktoken reads
