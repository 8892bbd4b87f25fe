"""``keel db``: schema migrations and checkpoint pruning from the command line."""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer
from rich.console import Console

from keel.checkpoints.retention import DEFAULT_KEEP

db_app = typer.Typer(help="Database maintenance: migrations and checkpoint retention.")
console = Console(highlight=False, soft_wrap=True)


def _url() -> str:
    from keel.graphs.settings import Settings  # the commands' parts load when one runs

    return Settings().database_url


@db_app.command("upgrade")
def upgrade_command() -> None:
    """Apply the schema migrations the database does not have yet."""
    from keel.checkpoints.migrate import (
        head_revision,
        migration_engine,
        revision_sync,
        upgrade_sync,
    )
    from keel.checkpoints.urls import parse_database_url

    db = parse_database_url(_url())
    if db.kind == "memory":
        console.print("[red]error:[/red] an in-memory database has nothing to upgrade")
        raise typer.Exit(2)
    engine = migration_engine(db)
    if db.path is not None:
        db.path.parent.mkdir(parents=True, exist_ok=True)
    before = revision_sync(engine)
    upgrade_sync(engine)
    after = revision_sync(engine)
    console.print(f"schema: {before or 'empty'} -> {after} (head {head_revision()})")


@db_app.command("prune")
def prune_command(
    keep: Annotated[
        int | None,
        typer.Option(
            "--keep",
            min=1,
            help="Checkpoints to keep per conversation [default: KEEL_CHECKPOINT_KEEP, "
            f"else {DEFAULT_KEEP}]",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Keep the newest N checkpoints of every conversation; messages and tasks are never touched."""
    from keel.checkpoints.backend import open_backend
    from keel.checkpoints.retention import prune_all
    from keel.graphs.settings import Settings

    settings = Settings()
    kept = keep or settings.checkpoint_keep

    async def run() -> int:
        async with open_backend(settings.database_url, keep=settings.checkpoint_keep) as backend:
            return await prune_all(backend.saver, kept)

    threads = asyncio.run(run())
    console.print(f"pruned {threads} conversation(s) to their newest {kept} checkpoints")
