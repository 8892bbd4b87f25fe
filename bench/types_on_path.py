"""The keel types and modules one JSON message passes through, from the HTTP route to the reply.

Runs ``keel serve``'s app under uvicorn in this process (SQLite in a temporary folder, the offline
model), sends two messages over HTTP to warm it up, then traces one more: a tool turn, "Add buy
milk", posted as JSON to ``POST /v1/conversations/{id}/messages``. While that request is served,
every call of a function defined in keel's package is recorded (``sys.setprofile`` in the server's
thread). A keel type is counted when, during that request,

- one of its methods runs (a function whose qualified name is ``Type.method``), or
- a keel function receives an instance of it as an argument or returns one;

a keel module is counted when a function defined in it runs. Types are classes defined in keel's
package (enums, exceptions, pydantic models, dataclasses, protocols' implementations); a
``TypedDict`` is a plain ``dict`` at run time and is not seen. Prints the two counts and the
lists, grouped by top-level folder.

    python bench/types_on_path.py
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path
from types import FrameType
from typing import Any

import httpx
import uvicorn

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from keel.api.app import create_app  # noqa: E402
from keel.graphs.settings import Settings  # noqa: E402
from tests.keel_process import free_port  # noqa: E402

OWN = str(ROOT) + os.sep
SKIP = (OWN + "tests" + os.sep, OWN + "bench" + os.sep, OWN + ".venv" + os.sep)
KEY = "types-on-path-key"


class Tracer:
    """Records keel's modules and types while ``on`` is set."""

    def __init__(self) -> None:
        """Nothing recorded, and off."""
        self.on = False
        self.modules: set[str] = set()
        self.types: dict[str, set[str]] = defaultdict(set)  # type -> how it was met

    def _own(self, frame: FrameType) -> bool:
        name = frame.f_code.co_filename
        return name.startswith(OWN) and not name.startswith(SKIP)

    def _note(self, value: Any, how: str) -> None:
        kind = type(value)
        module = getattr(kind, "__module__", "") or ""
        if module.startswith("keel."):
            self.types[f"{module}.{kind.__qualname__}"].add(how)

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        """The profile hook: a keel function called (its module, its type, its arguments' types)
        or returning (its value's type).
        """  # noqa: D205
        if not self.on or event not in ("call", "return") or not self._own(frame):
            return
        code = frame.f_code
        module = frame.f_globals.get("__name__", "")
        if event == "call":
            self.modules.add(module)
            owner, _, _ = code.co_qualname.rpartition(".")
            if owner and "<locals>" not in owner and "<" not in owner:
                self.types[f"{module}.{owner}"].add("method")
            for name in code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]:
                if name in frame.f_locals:
                    self._note(frame.f_locals[name], "argument")
        else:
            self._note(arg, "returned")


def serve(app: Any, port: int, tracer: Tracer, started: threading.Event) -> uvicorn.Server:
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None, lifespan="on")
    server = uvicorn.Server(config)

    def run() -> None:
        sys.setprofile(tracer)
        asyncio.run(server.serve())

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    started.set()
    return server


def main() -> None:
    folder = tempfile.mkdtemp(prefix="keel-types-")
    settings = Settings(
        database_url=f"sqlite:///{folder}/keel.db", openai_api_key=None, api_keys=f"ann:{KEY}"
    )
    tracer = Tracer()
    port = free_port()
    server = serve(create_app(settings), port, tracer, threading.Event())
    url = f"http://127.0.0.1:{port}"
    headers = {"Authorization": f"Bearer {KEY}"}
    with httpx.Client(base_url=url, headers=headers, timeout=60) as client:
        cid = client.post("/v1/conversations", json={}).raise_for_status().json()["conversation_id"]
        for text in ("Add call mom", "Show all"):  # warm: the model, the topic, the caches
            client.post(f"/v1/conversations/{cid}/messages", json={"content": text})
        tracer.on = True
        reply = client.post(f"/v1/conversations/{cid}/messages", json={"content": "Add buy milk"})
        tracer.on = False
    server.should_exit = True
    print(f"reply: {reply.status_code} {reply.json().get('reply')!r}")
    by_folder: dict[str, list[str]] = defaultdict(list)
    for name in sorted(tracer.types):
        by_folder[name.split(".")[1]].append(
            f"{name[len('keel.') :]} ({', '.join(sorted(tracer.types[name]))})"
        )
    print(f"keel types met: {len(tracer.types)}; keel modules run: {len(tracer.modules)}")
    for folder_name, names in sorted(by_folder.items()):
        print(f"\n{folder_name} ({len(names)})")
        for name in names:
            print(f"  {name}")


if __name__ == "__main__":
    main()
