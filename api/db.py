"""``keel db``: schema migrations and checkpoint pruning from the command line."""

from __future__ import annotations

import asyncio
import os
from typing import Annotated

import typer
from rich.console import Console

from checkpoints.database import create_engine
from checkpoints.migrate import current_revision, head_revision, upgrade
from checkpoints.retention import DEFAULT_KEEP, prune_all
from checkpoints.saver import open_checkpointer
from checkpoints.urls import DEFAULT_DATABASE_URL, parse_database_url

db_app = typer.Typer(help="Database maintenance: migrations and checkpoint retention.")
console = Console(highlight=False, soft_wrap=True)


def _url() -> str:
    return os.environ.get("KEEL_DATABASE_URL") or DEFAULT_DATABASE_URL


@db_app.command("upgrade")
def upgrade_command() -> None:
    """Apply the schema migrations the database does not have yet."""

    async def run() -> tuple[str | None, str | None]:
        engine = create_engine(parse_database_url(_url()))
        try:
            before = await current_revision(engine)
            await upgrade(engine)
            return before, await current_revision(engine)
        finally:
            await engine.dispose()

    before, after = asyncio.run(run())
    console.print(f"schema: {before or 'empty'} -> {after} (head {head_revision()})")


@db_app.command("prune")
def prune_command(
    keep: Annotated[
        int, typer.Option("--keep", min=1, help="Checkpoints to keep per conversation.")
    ] = DEFAULT_KEEP,
) -> None:
    """Keep the newest N checkpoints of every conversation; messages and tasks are never touched."""

    async def run() -> int:
        async with open_checkpointer(_url()) as saver:
            return await prune_all(saver, keep)

    threads = asyncio.run(run())
    console.print(f"pruned {threads} conversation(s) to their newest {keep} checkpoints")
