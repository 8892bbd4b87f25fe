"""The wire shapes the test stub answers with: chat completions, their streamed chunks, and the
chunks of a server that repeats a tool's name in each of them; the names of its misbehaviours."""

from __future__ import annotations

from typing import Any

STREAM_PIECE = 4
"""Characters per streamed content chunk: small, so lines arrive split across chunks."""


def stream_chunks(body: dict[str, Any]) -> list[dict[str, Any]]:
    """A chat completion as the chunks of a streamed answer (content a few characters at a time)."""
    message = body["choices"][0]["message"]
    base = {"id": body["id"], "object": "chat.completion.chunk", "created": 0, "model": "stub"}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    content = message.get("content") or ""
    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks += [
        chunk({"content": content[i : i + STREAM_PIECE]})
        for i in range(0, len(content), STREAM_PIECE)
    ]
    for i, call in enumerate(message.get("tool_calls", [])):
        chunks.append(chunk({"tool_calls": [{"index": i, **call}]}))
    chunks.append(chunk({}, body["choices"][0]["finish_reason"]))
    return chunks


def completion(message: dict[str, Any], finish: str = "stop") -> dict[str, Any]:
    """A chat completion answering ``message``."""
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": 0,
        "model": "stub",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


HANG = "hang"
RUNAWAY = "runaway"
EMPTY_STREAM = "empty_stream"
REPEATED_NAME = "repeated_name"
RUNAWAY_PIECES = 100_000
"""A runaway answer without ``max_tokens`` stops only after this many pieces (or when the client
goes away)."""


def repeated_name_chunks(body: dict[str, Any]) -> list[dict[str, Any]]:
    """A tool-call answer streamed as some servers do: the name again in every chunk."""
    call = body["choices"][0]["message"]["tool_calls"][0]
    args = call["function"]["arguments"]
    base = {"id": body["id"], "object": "chat.completion.chunk", "created": 0, "model": "stub"}
    pieces = [args[i : i + STREAM_PIECE] for i in range(0, len(args), STREAM_PIECE)]
    chunks = []
    for piece in pieces:
        function = {"name": call["function"]["name"], "arguments": piece}
        delta = {
            "tool_calls": [{"index": 0, "id": call["id"], "type": "function", "function": function}]
        }
        chunks.append({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
    chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    return chunks
