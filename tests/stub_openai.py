"""A local OpenAI-compatible chat-completions server for tests: scripted answers over real HTTP.

Besides its scripted answers it misbehaves the ways real servers do, on request: it hangs (a stream
that never sends a chunk), runs away (content until ``max_tokens``, or for good), answers an empty
stream, repeats a tool's name in every streamed chunk, fails with a status, refuses structured
output, or refuses an assistant message with content null beside its tool calls. It notes the
requests whose client went away (``closed``).
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.stub_wire import (
    EMPTY_STREAM,
    HANG,
    REPEATED_NAME,
    RUNAWAY,
    RUNAWAY_PIECES,
    completion,
    repeated_name_chunks,
    stream_chunks,
)

__all__ = ["EMPTY_STREAM", "HANG", "RUNAWAY", "StubOpenAI", "completion", "stream_chunks"]

CONTEXT_LENGTH_MESSAGE = (
    "This model's maximum context length is 128000 tokens. "
    "However, your messages resulted in 130000 tokens."
)


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
        self.default: tuple[int, Any] | None = None
        """What every request is answered when the queue is empty (else a 500)."""
        self.closed = 0
        """Requests whose client went away before the answer was finished."""
        self.refuse_plans: int | None = None
        """Answer every request for structured output (a plan) with this status."""
        self.refuse_streamed_tools = False
        """Answer 500 to a streamed request that offers tools, as llama-cpp-python's
        function-calling format does ("Automatic streaming tool choice is not supported")."""
        self.refuse_null_content = False
        """Answer 500 to a request holding an assistant message with tool calls and content null,
        as llama-cpp-python's server does (the queued answer stays for the next request)."""
        self.props: dict[str, Any] | None = None
        """What ``GET /props`` answers, as llama.cpp's server does (None: 404, as OpenAI)."""
        self.props_key: str | None = None
        """The key ``GET`` requests must bring (``llama-server --api-key``); None: none."""
        self.loading = False
        """Answer every ``GET`` 503 "Loading model", as llama.cpp's server does while it loads."""
        self.stopping = threading.Event()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                key = self.headers.get("authorization")
                if stub.props_key is not None and key != f"Bearer {stub.props_key}":
                    self.answer(401, {"error": {"message": "Invalid API Key"}}, {})
                elif stub.loading:
                    loading = {"message": "Loading model", "type": "unavailable_error", "code": 503}
                    self.answer(503, {"error": loading}, {})
                elif self.path == "/props" and stub.props is not None:
                    self.answer(200, stub.props, {})
                else:
                    self.answer(404, {"error": {"message": "not found"}}, {})

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("content-length", 0))
                request = json.loads(self.rfile.read(length))
                if is_plan_request(request):
                    self.answer_plan(request)
                    return
                stub.requests.append(request)
                time.sleep(stub.delays.get(len(stub.requests) - 1, 0.0))
                if stub.refuse_streamed_tools and request.get("stream") and request.get("tools"):
                    message = "Automatic streaming tool choice is not supported"
                    self.answer(500, {"error": {"message": message}}, request)
                    return
                if stub.refuse_null_content and null_beside_calls(request):
                    self.answer(500, {"error": {"message": "content: null"}}, request)
                    return
                status, body = stub.next_answer()
                try:
                    if body == EMPTY_STREAM and not request.get("stream"):
                        body = completion({"role": "assistant", "content": ""})  # said nothing
                    limit = request.get("max_tokens") or request.get("max_completion_tokens")
                    if body == RUNAWAY and not request.get("stream") and limit:
                        content = "and so on " * limit  # cut where the client said
                        body = completion({"role": "assistant", "content": content}, "length")
                    if status == 200 and isinstance(body, str):
                        self.misbehave(body, request)
                        return
                    self.answer(status, body, request)
                except (BrokenPipeError, ConnectionResetError):
                    stub.closed += 1

            def misbehave(self, how: str, request: dict[str, Any]) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                if how == HANG:  # not a byte, until the client goes away
                    while not stub.stopping.wait(0.05):
                        if self.client_left():
                            stub.closed += 1
                            return
                    return
                if how == RUNAWAY:
                    limit = request.get("max_tokens") or request.get("max_completion_tokens")
                    body = completion({"role": "assistant", "content": ""})
                    base = stream_chunks(body)[0]
                    for _ in range(limit or RUNAWAY_PIECES):
                        delta = {"content": "and so on "}
                        chunk = {**base, "choices": [{"index": 0, "delta": delta}]}
                        self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                        self.wfile.flush()
                        time.sleep(0.001)
                    end = {
                        **base,
                        "choices": [{"index": 0, "delta": {}, "finish_reason": "length"}],
                    }
                    self.wfile.write(f"data: {json.dumps(end)}\n\n".encode())
                elif how.startswith(REPEATED_NAME):
                    for chunk in repeated_name_chunks(json.loads(how[len(REPEATED_NAME) :])):
                        self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")  # EMPTY_STREAM: nothing before it

            def client_left(self) -> bool:
                readable, _, _ = select.select([self.connection], [], [], 0)
                return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""

            def answer(self, status: int, body: dict[str, Any], request: dict[str, Any]) -> None:
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
                if stub.refuse_plans is not None:
                    status, plan = stub.refuse_plans, {"message": "response_format not supported"}
                body = completion({"role": "assistant", "content": json.dumps(plan)})
                if request.get("tools"):  # function calling: the plan is the call's arguments
                    call = {"id": "call_plan", "type": "function"}
                    call["function"] = {"name": "PlanSteps", "arguments": json.dumps(plan)}
                    body = completion({"role": "assistant", "content": "", "tool_calls": [call]})
                if status == 200 and request.get("stream"):
                    self.send_response(200)
                    self.send_header("content-type", "text/event-stream")
                    self.end_headers()
                    for chunk in stream_chunks(body):
                        self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.write(b"data: [DONE]\n\n")
                    return
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
        self.stopping.set()
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

    def next_answer(self) -> tuple[int, Any]:
        """The next queued answer, else the default one, else a 500."""
        if self.answers:
            return self.answers.pop(0)
        return self.default or (500, {"error": {"message": "nothing queued"}})

    def always(self, content: str) -> None:
        """Answer every request with ``content`` once the queue is empty (a model never DONE)."""
        self.reply(content)
        self.default = self.answers.pop()

    def misbehaving(self, how: str, times: int = 1) -> None:
        """Queue ``times`` answers that misbehave ``how``: HANG, RUNAWAY or EMPTY_STREAM."""
        self.answers.extend([(200, how)] * times)

    def repeated_name(self, name: str, args: dict[str, Any], times: int = 1) -> None:
        """Queue a tool call streamed with ``name`` repeated in each of its chunks."""
        self.reply(tool_calls=[{"name": name, "args": args}])
        body = self.answers.pop()[1]
        self.answers.extend([(200, REPEATED_NAME + json.dumps(body))] * times)


def null_beside_calls(request: dict[str, Any]) -> bool:
    """The request holds an assistant message with tool calls whose content is null."""
    return any(
        m.get("role") == "assistant" and m.get("tool_calls") and m.get("content") is None
        for m in request.get("messages", [])
    )


def is_plan_request(request: dict[str, Any]) -> bool:
    """A request for a mission's plan: structured output by schema, JSON mode or function."""
    if request.get("response_format"):
        return True
    choice = request.get("tool_choice")
    return isinstance(choice, dict) and choice.get("function", {}).get("name") == "PlanSteps"
