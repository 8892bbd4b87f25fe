"""What the server holds for its lifetime: the database, the checkpointer, the compiled graph.

``open_service(settings)`` opens them in the app's lifespan; routers reach them through
``api.deps``. ``turn_context`` builds the per-turn run context for a user.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, replace

from langgraph.checkpoint.base import BaseCheckpointSaver
from sqlalchemy.ext.asyncio import AsyncEngine

from api.settings import Settings
from checkpoints.conversations import ConversationStore
from checkpoints.database import open_database
from checkpoints.locks import TurnLock
from checkpoints.messages import MessageLog
from checkpoints.saver import open_checkpointer
from checkpoints.topics import TopicStore
from graphs.builder import KeelGraph, build_graph
from nodes.runtime import KeelContext


@dataclass
class Service:
    """The long-lived parts of a running server."""

    settings: Settings
    engine: AsyncEngine
    saver: BaseCheckpointSaver
    graph: KeelGraph
    conversations: ConversationStore
    log: MessageLog
    topics: TopicStore
    locks: TurnLock
    context: KeelContext
    """Built once: stores, the chat model (tools bound) and settings shared by every turn."""

    def turn_context(self, user_id: str) -> KeelContext:
        """The run context of one turn for ``user_id`` (the shared context, another user)."""
        return replace(self.context, user_id=user_id)


@asynccontextmanager
async def open_service(settings: Settings) -> AsyncIterator[Service]:
    """Open the database and checkpointer and compile the graph."""
    async with AsyncExitStack() as stack:
        engine = await stack.enter_async_context(open_database(settings.database_url))
        saver = await stack.enter_async_context(open_checkpointer(settings.database_url))
        context = KeelContext.for_engine(engine, saver)
        context.agent_model()  # build the model once, not per turn
        yield Service(
            settings=settings,
            engine=engine,
            saver=saver,
            graph=build_graph(checkpointer=saver),
            conversations=ConversationStore(engine),
            log=MessageLog(engine),
            topics=TopicStore(engine),
            locks=TurnLock(engine),
            context=context,
        )
