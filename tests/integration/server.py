"""A real `keel serve` child process on a free port, for the integration tests."""

from __future__ import annotations

import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import httpx

from tests.keel_process import KEEL, ROOT, free_port, keel_env
from tests.stub_openai import StubOpenAI


def say(
    server: Server | str,
    cid: str,
    content: str,
    headers: dict[str, str] | None = None,
    timeout: float = 60,
    status: int | None = None,
) -> httpx.Response:
    """Send one message to a conversation of a served keel; the answer (JSON, whatever it says).

    With ``status``, the answer must have it.
    """
    url = server if isinstance(server, str) else server.url
    answer = httpx.post(
        f"{url}/v1/conversations/{cid}/messages",
        json={"content": content},
        headers=headers,
        timeout=timeout,
    )
    kind = answer.headers.get("content-type", "")
    assert kind.startswith("application/json"), (answer.status_code, answer.text)
    if status is not None:
        assert answer.status_code == status, answer.text
    return answer


@dataclass
class Server:
    url: str
    process: subprocess.Popen[str]
    database_url: str


def wait_until_ready(
    process: subprocess.Popen, url: str, output: IO[str], name: str, seconds: float = 180
) -> None:
    """Poll ``url`` until it answers 200; fail with the process's output if it exits first."""
    deadline = time.monotonic() + seconds
    while True:
        if process.poll() is not None:
            output.seek(0)
            raise RuntimeError(f"{name} exited: {output.read()[-4000:]}")
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"{name} did not become ready")
        time.sleep(0.2)


@contextmanager
def running(
    command: list[str], cwd: Path, env: dict[str, str], log: Path, ready: str, seconds: float
) -> Iterator[None]:
    """``command`` started in a session of its own, its output in ``log``, until ``ready``
    answers 200; stopped after.
    """  # noqa: D205
    output = log.open("w+")
    process = subprocess.Popen(
        command, cwd=cwd, env=env, stdout=output, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        wait_until_ready(process, ready, output, Path(command[0]).name, seconds)
        yield
    finally:
        stop(process)
        output.close()


def stop(process: subprocess.Popen, seconds: float = 20) -> None:
    """Ask the process to stop; kill it if it has not within ``seconds``."""
    process.terminate()
    try:
        process.wait(seconds)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextmanager
def keel_server(database_url: str, workers: int = 1, **env: str) -> Iterator[Server]:
    port = free_port()
    output = tempfile.TemporaryFile(mode="w+")  # a pipe nobody reads would fill and stall it
    process = subprocess.Popen(
        [*KEEL, "serve", "--port", str(port), "--workers", str(workers)],
        stdout=output,
        stderr=subprocess.STDOUT,
        text=True,
        env=keel_env(database_url, KEEL_LOG_FORMAT="json", **env),
        cwd=ROOT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_ready(process, f"{url}/readyz", output, "keel serve")
        yield Server(url, process, database_url)
    finally:
        stop(process)
        output.close()


@contextmanager
def keel_server_with_model(database_url: str, **env: str) -> Iterator[tuple[Server, StubOpenAI]]:
    """``keel serve`` whose model is the scripted OpenAI-compatible stub; yields both."""
    with (
        StubOpenAI() as stub,
        keel_server(
            database_url,
            KEEL_OPENAI_API_KEY="test-key",  # the test environment drops OPENAI_API_KEY
            KEEL_OPENAI_BASE_URL=stub.base_url,
            **env,
        ) as server,
    ):
        yield server, stub
