"""Ownership answers take the same work whether the conversation is unknown or another user's."""

import uuid

from keel.checkpoints.conversation_store import ConversationNotFound, ConversationStore


class Counting:
    """A database that counts the statements it is given."""

    def __init__(self, db):
        self.db, self.statements = db, 0

    def __getattr__(self, name):
        return getattr(self.db, name)

    async def fetchone(self, sql, params=None):
        self.statements += 1
        return await self.db.fetchone(sql, params)

    async def execute(self, sql, params=None):
        self.statements += 1
        return await self.db.execute(sql, params)


async def refused(store, cid, user):
    try:
        await store.require(cid, user)
    except ConversationNotFound:
        return True
    return False


async def test_another_users_conversation_costs_what_an_unknown_one_costs(memory_keel):
    db = Counting(memory_keel.db)
    store = ConversationStore(db)
    anns = (await store.create("ann"))["conversation_id"]
    await store.require(anns, "ann")
    counts = []
    for cid in (anns, str(uuid.uuid4())):
        db.statements = 0
        assert await refused(store, cid, "bob")
        counts.append(db.statements)
    assert counts == [1, 1]
    db.statements = 0
    await store.require(anns, "ann")
    assert db.statements == 1  # the owner's own check reads the table too: never a stale answer
