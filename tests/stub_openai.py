"""A local OpenAI-compatible chat-completions server for tests: scripted answers over real HTTP."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CONTEXT_LENGTH_MESSAGE = (
    "This model's maximum context length is 128000 tokens. "
    "However, your messages resulted in 130000 tokens."
)


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


def default_plan(request: dict[str, Any]) -> dict[str, Any]:
    """The plan the stub gives when none was queued: the request as one plain step."""
    asked = next((m["content"] for m in reversed(request["messages"]) if m["role"] == "user"), "")
    return {"steps": [{"description": str(asked)[:80] or "answer", "tool": None}]}


class StubOpenAI:
    """Serves /v1/chat/completions from a queue of (status, body) answers; records requests.

    A request for structured output (``response_format``: a mission's plan) is answered apart,
    from ``plans`` (JSON the model "returns"), or a one-step plan when none is queued, and recorded
    in ``plan_requests``: the queue of ordinary answers stays for the chat.
    """

    def __init__(self) -> None:
        self.answers: list[tuple[int, dict[str, Any]]] = []
        self.requests: list[dict[str, Any]] = []
        self.plans: list[tuple[int, Any]] = []
        self.plan_requests: list[dict[str, Any]] = []
        self.delays: dict[int, float] = {}
        """Seconds to wait before answering the request of this number (0 is the first)."""
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("content-length", 0))
                request = json.loads(self.rfile.read(length))
                if request.get("response_format"):
                    self.answer_plan(request)
                    return
                stub.requests.append(request)
                time.sleep(stub.delays.get(len(stub.requests) - 1, 0.0))
                status, body = stub.answers.pop(0) if stub.answers else (500, {"error": {}})
                if request.get("stream") and status == 200:
                    self.send_response(200)
                    self.send_header("content-type", "text/event-stream")
                    self.end_headers()
                    for chunk in stream_chunks(body):
                        self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                        self.wfile.flush()
                    self.wfile.write(b"data: [DONE]\n\n")
                    return
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def answer_plan(self, request: dict[str, Any]) -> None:
                stub.plan_requests.append(request)
                status, plan = stub.plans.pop(0) if stub.plans else (200, default_plan(request))
                body = completion({"role": "assistant", "content": json.dumps(plan)})
                data = json.dumps(body if status == 200 else {"error": plan}).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> StubOpenAI:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def reply(self, content: str = "", tool_calls: list[dict[str, Any]] | None = None) -> None:
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if tool_calls:
            message["tool_calls"] = [
                {
                    "id": f"call_{i}_{c['name']}",
                    "type": "function",
                    "function": {"name": c["name"], "arguments": json.dumps(c["args"])},
                }
                for i, c in enumerate(tool_calls)
            ]
        body = {
            "id": "chatcmpl-stub",
            "object": "chat.completion",
            "created": 0,
            "model": "stub",
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if tool_calls else "stop",
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
        self.answers.append((200, body))

    def plan(self, steps: Any, status: int = 200) -> None:
        """Queue the plan the model returns next: ``{"steps": [...]}`` (any JSON, to test junk)."""
        self.plans.append((status, steps))

    def context_length_error(self) -> None:
        self.answers.append(
            (
                400,
                {
                    "error": {
                        "message": CONTEXT_LENGTH_MESSAGE,
                        "type": "invalid_request_error",
                        "param": "messages",
                        "code": "context_length_exceeded",
                    }
                },
            )
        )

    def server_error(self) -> None:
        self.answers.append((500, {"error": {"message": "upstream down", "type": "server_error"}}))
