"""How long `keel chat` takes to show its prompt, and to answer its first message.

Starts `keel chat` N times in a terminal (a pseudo-terminal, as a person runs it) on a fresh SQLite
database and the offline model, and prints, for each start, the seconds until the "you>" prompt
shows and until the first reply ("Add buy milk") comes, with the median of each.

    python bench/chat_start.py --runs 5
"""

from __future__ import annotations

import argparse
import os
import pty
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

KEEL = Path(sys.executable).with_name("keel")
WAIT_SECONDS = 120.0


def _until(fd: int, text: bytes, seen: bytearray) -> float:
    """Read the terminal until ``text`` shows; the moment it did."""
    deadline = time.monotonic() + WAIT_SECONDS
    while text not in seen:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"{text!r} did not show: {bytes(seen[-300:])!r}")
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            seen += os.read(fd, 4096)
    return time.monotonic()


def one_start(data: Path) -> tuple[float, float]:
    """Seconds to the prompt and to the first reply, for one start of `keel chat`."""
    main, side = pty.openpty()
    env = {**os.environ, "XDG_DATA_HOME": str(data), "KEEL_ENV_FILE": "", "TERM": "dumb"}
    env.pop("KEEL_DATABASE_URL", None)
    started = time.monotonic()
    process = subprocess.Popen(
        [str(KEEL), "chat"], stdin=side, stdout=side, stderr=side, env=env, close_fds=True
    )
    os.close(side)
    seen = bytearray()
    try:
        prompt = _until(main, b"you>", seen) - started
        os.write(main, b"Add buy milk\r")
        reply = _until(main, b"Created task", seen) - started
        os.write(main, b"/quit\r")
        process.wait(timeout=WAIT_SECONDS)
    finally:
        if process.poll() is None:
            process.kill()
        os.close(main)
    return prompt, reply


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    prompts, replies = [], []
    with tempfile.TemporaryDirectory() as folder:
        for n in range(args.runs):
            prompt, reply = one_start(Path(folder))  # the first run also makes the database
            prompts.append(prompt)
            replies.append(reply)
            print(f"run {n + 1}: prompt {prompt:.2f} s, first reply {reply:.2f} s")
    print(
        f"median of {args.runs}: prompt {statistics.median(prompts):.2f} s, "
        f"first reply {statistics.median(replies):.2f} s"
    )


if __name__ == "__main__":
    main()
