"""``keel serve``'s server: uvicorn with keel's connection limits, and its workers' metrics.

Called by ``keel.api.cli``. Every connection is served by ``TimedHttpProtocol``
(``keel.api.http_timeouts``: a connection cannot sit on a half-sent request) within
``KEEL_MAX_CONNECTIONS``; a WebSocket message is bounded like a request body.

With ``--workers N`` the workers count their metrics in one directory of this server's own, made
when it starts (inside ``PROMETHEUS_MULTIPROC_DIR`` when that is set) and removed when it stops;
a directory left by a server that was killed is removed by the next one to start beside it. When
a worker exits (killed, or replaced by uvicorn), its live gauges are retired at once
(``keel.api.prometheus.retire_dead_workers``), so /metrics reports live workers' pools only.

The workers are forks of ``keel serve``, which imports keel's app first (gunicorn's ``--preload``):
a worker is ready in a fraction of a second instead of importing keel anew, 2.5 s of CPU each and
N at once. The import opens no connection and starts no thread; each worker makes the app and
opens its database itself. prometheus-client picks its way of counting when it is imported, so it
is imported only once ``PROMETHEUS_MULTIPROC_DIR`` is set, and the forks inherit that choice.
"""

from __future__ import annotations

import errno
import importlib
import multiprocessing
import os
import re
import shutil
import signal
import socket as sockets
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from socket import socket

import uvicorn
from uvicorn import _subprocess as uvicorn_subprocess
from uvicorn.supervisors.multiprocess import SIGNALS, Multiprocess

from keel.api.command_name import invoked_as
from keel.graphs.settings import Settings

STARTUP_FAILURE = 3
"""uvicorn's exit status for a server that never started."""
_OWN_DIRECTORY = re.compile(r"keel-metrics-(\d+)-\w+")
"""A server's metrics directory, named after the pid of the ``keel serve`` that made it."""


class PortInUse(OSError):
    """The address ``keel serve`` was asked to listen on is taken by another program."""

    def __init__(self, host: str, port: int) -> None:
        """Name the address and how to choose another."""
        super().__init__(
            f"port {port} on {host} is already in use; pick another with KEEL_PORT=8001 "
            f"or {invoked_as()} serve --port 8001"
        )


def check_port_free(host: str, port: int) -> None:
    """Raise ``PortInUse`` when nothing could listen on ``host:port`` now (uvicorn binds later)."""
    family = sockets.AF_INET6 if ":" in host else sockets.AF_INET
    with sockets.socket(family, sockets.SOCK_STREAM) as probe:
        probe.setsockopt(sockets.SOL_SOCKET, sockets.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise PortInUse(host, port) from None
            raise


def uvicorn_config(settings: Settings, workers: int) -> uvicorn.Config:
    """How uvicorn runs keel's app under ``settings`` with ``workers`` processes."""
    from keel.api.http_timeouts import TimedHttpProtocol  # the app's errors, prometheus-client

    return uvicorn.Config(
        "keel.api.app:create_app",
        factory=True,
        host=settings.host,
        port=settings.port,
        workers=workers,
        log_config=None,
        http=TimedHttpProtocol,
        ws_max_size=settings.body_limit,
        limit_concurrency=settings.max_connections,
        timeout_keep_alive=settings.keep_alive_seconds,
    )


def serve(settings: Settings, workers: int) -> int:
    """Serve until told to stop; the exit status (non-zero: the server never started)."""
    if workers == 1:
        server = uvicorn.Server(uvicorn_config(settings, workers))
        try:
            server.run()
        except KeyboardInterrupt:  # uvicorn raises the Ctrl-C it caught once it has stopped
            pass
        return 0 if server.started else STARTUP_FAILURE
    with private_metrics_dir(settings.metrics_dir) as directory:
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = directory  # the workers inherit it
        config = uvicorn_config(settings, workers)  # prometheus-client imported from here on
        preload(config)
        Workers(config, [config.bind_socket()], directory).run()
    return 0


def preload(config: uvicorn.Config) -> None:
    """Import the app ``config`` names in this process, and have uvicorn start its workers as
    forks of it (uvicorn spawns them, and each imports everything again).
    """  # noqa: D205
    if sys.platform != "linux":  # elsewhere a fork may not be safe (macOS): spawned, as uvicorn
        return
    assert isinstance(config.app, str)
    importlib.import_module(config.app.partition(":")[0])
    os.register_at_fork(after_in_child=_default_signals)
    uvicorn_subprocess.spawn = multiprocessing.get_context("fork")  # type: ignore[assignment]


def _default_signals() -> None:
    """A forked worker starts with the signals' default actions, as a spawned one does, not
    with its supervisor's handlers (until uvicorn sets its own, SIGTERM would be queued for a
    supervisor that is not there).
    """  # noqa: D205
    for signum in SIGNALS:
        default = signal.default_int_handler if signum == signal.SIGINT else signal.SIG_DFL
        signal.signal(signum, default)


@contextmanager
def private_metrics_dir(parent: str | None) -> Iterator[str]:
    """A directory for one server's workers to count in, under ``parent``; removed at the end."""
    parent = parent or tempfile.gettempdir()
    remove_abandoned(parent)
    directory = tempfile.mkdtemp(prefix=f"keel-metrics-{os.getpid()}-", dir=parent)
    try:
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def remove_abandoned(parent: str) -> None:
    """Remove the metrics directories under ``parent`` whose server is gone (it was killed)."""
    for entry in os.scandir(parent):
        match = _OWN_DIRECTORY.fullmatch(entry.name)
        if match and entry.is_dir() and not is_alive(int(match.group(1))):
            shutil.rmtree(entry.path, ignore_errors=True)


def is_alive(pid: int) -> bool:
    """Process ``pid`` exists (a reaped one does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


class Workers(Multiprocess):
    """uvicorn's worker supervisor, which retires a worker's gauges when the worker is gone."""

    def __init__(self, config: uvicorn.Config, sockets: list[socket], metrics_dir: str) -> None:
        """Supervise ``config.workers`` workers counting in ``metrics_dir``."""
        super().__init__(config, sockets)
        self.metrics_dir = metrics_dir

    def _pids(self) -> set[int | None]:
        return {process.pid for process in self.processes}

    def keep_subprocess_alive(self) -> None:
        """Replace a dead or hung worker, as uvicorn does; retire the gauges of the one gone."""
        from keel.api.prometheus import retire_dead_workers

        before = self._pids()
        super().keep_subprocess_alive()
        if self._pids() != before:
            retire_dead_workers(self.metrics_dir)

    def restart_all(self) -> None:
        """Replace every worker (SIGHUP), as uvicorn does; retire the gauges of those gone."""
        from keel.api.prometheus import retire_dead_workers

        super().restart_all()
        retire_dead_workers(self.metrics_dir)
