"""The ``keel`` command line: ``keel chat`` for a terminal conversation, ``keel db`` for upkeep.

Entry point of the console script declared in pyproject.toml.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Annotated
from urllib.parse import urlsplit

import typer
from rich.console import Console
from rich.markup import escape

from keel.api.db_command import db_app
from keel.api.lines import line_in_thread
from keel.api.logs import configure_logging
from keel.api.nlu_command import nlu_app
from keel.api.topics_command import topics_app
from keel.checkpoints.users import LOCAL_USER

if TYPE_CHECKING:
    from keel.graphs.settings import Settings

app = typer.Typer(help="keel: a conversational task agent on LangGraph.", no_args_is_help=True)
app.add_typer(db_app, name="db")
app.add_typer(topics_app, name="topics")
app.add_typer(nlu_app, name="nlu")


ToolsOption = Annotated[
    str | None,
    typer.Option(
        "--tools",
        help="The agent's tools, as module:attribute naming a list of LangChain tools, "
        "importable from the current folder (KEEL_TOOLS; default: keel's todo tools).",
    ),
]


@app.callback()
def main() -> None:
    """Keel: a conversational task agent on LangGraph."""


def use_tools(tools: str | None) -> None:
    """Make ``tools`` (module:attribute) the process's tools, and its workers' (exit 2: unusable).

    The current folder is searched first for the module, as uvicorn and python do for theirs.
    """
    import sys

    from keel.checkpoints.times import FieldError, zone_named
    from keel.graphs.assembly import ToolsNotLoaded, load_tools
    from keel.graphs.settings import DEFAULT_TOOLS, Settings

    if tools is not None:
        os.environ["KEEL_TOOLS"] = tools
    try:
        settings = Settings()
        named = settings.tools
        if named != DEFAULT_TOOLS and os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())  # spawned workers get it with the rest of the path
        load_tools(named)
        zone_named(settings.timezone)
    except FieldError as exc:
        Console(stderr=True).print(f"[red]refusing to start:[/red] KEEL_TIMEZONE: {exc.message}")
        raise typer.Exit(2) from None
    except (ToolsNotLoaded, ValueError) as exc:
        Console(stderr=True).print(f"[red]refusing to start:[/red] {exc}")
        raise typer.Exit(2) from None


@app.command("serve")
def serve_command(
    host: Annotated[str | None, typer.Option(help="Address to bind (KEEL_HOST).")] = None,
    port: Annotated[int | None, typer.Option(help="Port (KEEL_PORT).")] = None,
    workers: Annotated[int, typer.Option(min=1, help="Worker processes.")] = 1,
    tools: ToolsOption = None,
) -> None:
    """Serve the HTTP API (SQLite in ~/.local/share/keel, or KEEL_DATABASE_URL)."""
    from keel.api.serving import PortInUse, check_port_free, serve
    from keel.graphs.settings import Settings, UnsafeSettings

    if host:
        os.environ["KEEL_HOST"] = host
    if port:
        os.environ["KEEL_PORT"] = str(port)
    os.environ["KEEL_WORKERS"] = str(workers)  # each worker sizes its pool by it
    use_tools(tools)
    try:
        settings = Settings().for_serving()
    except (UnsafeSettings, ValueError) as exc:
        Console(stderr=True).print(f"[red]refusing to start:[/red] {exc}")
        raise typer.Exit(2) from None
    try:
        check_port_free(settings.host, settings.port)
    except PortInUse as exc:
        typer.echo(f"keel: {exc}", err=True)
        raise typer.Exit(1) from None
    configure_logging()
    shown = "127.0.0.1" if settings.host in ("0.0.0.0", "::") else settings.host
    shown = f"[{shown}]" if ":" in shown else shown
    typer.echo(
        f"keel: the chat page is at http://{shown}:{settings.port}/ "
        "(the API under /v1, its reference at /docs)",
        err=True,
    )
    typer.echo(f"keel: keeping its data in {stored_in(settings.database_url)}", err=True)
    if (note := earlier_data(settings)) is not None:
        typer.echo(f"keel: {note}", err=True)
    raise typer.Exit(serve(settings, workers))


EARLIER = Path(".keel") / "keel.db"
"""Where keel kept its data before it had a data directory: the folder it ran in."""


def earlier_data(settings: Settings) -> str | None:
    """A word on data an earlier keel kept in this folder, when the default database is in use."""
    if "database_url" in settings.model_fields_set or not EARLIER.is_file():
        return None
    return (
        f"{EARLIER} holds data of an earlier keel, no longer opened by default; to keep using "
        f"it: KEEL_DATABASE_URL=sqlite:///{EARLIER}"
    )


def stored_in(url: str) -> str:
    """Where a database URL keeps the data, to tell a person: a file's path, or the URL's kind."""
    if url.startswith("sqlite:///"):
        return str(Path(url.removeprefix("sqlite:///")).absolute())
    if url == "memory":
        return "memory (gone when keel stops)"
    where = urlsplit(url)
    return f"PostgreSQL ({where.hostname}{where.path})"  # no password, no options


@app.command("chat")
def chat_command(
    conversation: Annotated[
        str | None, typer.Option("--conversation", "-c", help="Continue this conversation id.")
    ] = None,
    user: Annotated[str, typer.Option("--user", "-u", help="Act as this user.")] = LOCAL_USER,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show events.")] = False,
    log_level: Annotated[str, typer.Option(help="Log level for stderr.")] = "warning",
    tools: ToolsOption = None,
) -> None:
    """Chat with keel in the terminal (SQLite in ~/.local/share/keel, or KEEL_DATABASE_URL)."""
    console = Console(highlight=False)
    console.soft_wrap = not console.is_terminal  # a terminal wraps at words; a pipe gets lines
    if EARLIER.is_file():  # a word on old data comes before the prompt (rare: read it then)
        from keel.graphs.settings import Settings

        if (note := earlier_data(Settings())) is not None:
            Console(stderr=True).print(f"[yellow]note:[/yellow] {note}", soft_wrap=True)
    ahead = conversation is None and tools is None and sys.stdin.isatty()
    first = read_ahead(console, user) if ahead else None
    try:
        if ahead:  # Ctrl-C at the prompt ends the session, not an import halfway through
            was = signal.signal(signal.SIGINT, lambda *_: leave_at_once(console))
        from keel.api.terminal import chat  # keel's parts load while the person types

        use_tools(tools)
        configure_logging(level=log_level)
        if ahead:
            signal.signal(signal.SIGINT, was)
        status = asyncio.run(chat(conversation, user, verbose, console, first))
    except (KeyboardInterrupt, asyncio.CancelledError):
        console.print("\nBye.")
        status = 0
    raise typer.Exit(status)


def leave_at_once(console: Console) -> None:
    """Ctrl-C while keel's parts load behind the first prompt: the session ends there, with
    nothing written yet (a conversation is made at its first message). An interrupt raised
    inside an import may surface as any error (pydantic wraps it in a SchemaError), so the
    process leaves from the handler instead.
    """  # noqa: D205
    console.print("\nBye.")
    console.file.flush()
    os._exit(0)


def read_ahead(console: Console, user: str) -> Future[str]:
    """A new conversation's banner and prompt at once, and its first line read in a thread while
    keel's parts load (a second or two): the line, or the EOFError of an input that ended. Only
    for a terminal (a pipe's lines are there already), and no ``--tools`` (checked first, to
    refuse them before a prompt).
    """  # noqa: D205
    console.print(f"New conversation  (user {escape(user)}; /state, /reset, /quit)")
    return line_in_thread(console)


@app.command("telegram")
def telegram_command(
    webhook: Annotated[
        str | None,
        typer.Option(
            help="Register this https URL (ending in /telegram/webhook) as the bot's webhook, "
            "for `keel serve` to take the updates, and exit."
        ),
    ] = None,
    log_level: Annotated[str, typer.Option(help="Log level for stderr.")] = "info",
    tools: ToolsOption = None,
) -> None:
    """Run keel as a Telegram bot (KEEL_TELEGRAM_TOKEN; long polling unless --webhook)."""
    try:
        from keel.api.telegram.polling import run_polling
        from keel.api.telegram.setup import register_webhook
    except ImportError:
        Console(stderr=True).print(
            "[red]keel telegram needs its extra:[/red] pip install 'keel[telegram]'"
        )
        raise typer.Exit(2) from None
    from keel.graphs.settings import Settings

    configure_logging(level=log_level)
    use_tools(tools)
    try:
        settings = Settings()
        settings.telegram_users  # noqa: B018 - refuse an allow-list that is not ids, now
        if settings.telegram_token is None:
            raise ValueError("KEEL_TELEGRAM_TOKEN is not set: get a bot token from @BotFather")
    except ValueError as exc:
        Console(stderr=True).print(f"[red]refusing to start:[/red] {exc}")
        raise typer.Exit(2) from None
    if webhook is not None:
        raise typer.Exit(asyncio.run(register_webhook(settings, webhook)))
    raise typer.Exit(asyncio.run(run_polling(settings)))
