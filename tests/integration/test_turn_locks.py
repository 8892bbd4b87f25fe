"""Whether a turn runs is read without taking the turn lock: a look never makes a turn wait or
answers 409, and it sees turns held by other processes (a second PostgreSQL session, a second
process on the SQLite lock file)."""

import subprocess
import sys
import uuid

import pytest

from keel.checkpoints.locks import TurnLocks, lock_key
from keel.checkpoints.process_locks import AdvisoryLocks, FileLocks

HOLD_IN_ANOTHER_PROCESS = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, int(sys.argv[2]))
print("held", flush=True)
sys.stdin.read()
"""


@pytest.fixture(params=["sqlite", "postgres"])
async def two_processes(request, tmp_path):
    """Two processes' lock layers on one database (two sessions, or the file seen twice)."""
    if request.param == "postgres":
        url = request.getfixturevalue("postgres_server")
        mine, theirs = AdvisoryLocks(url), AdvisoryLocks(url)
    else:
        mine, theirs = FileLocks(tmp_path / "locks"), None
    yield request.param, mine, theirs, tmp_path / "locks"
    for locks in (mine, theirs):
        if locks is not None:
            await locks.close()


async def test_a_look_sees_a_turn_held_by_another_process(two_processes):
    kind, mine, theirs, path = two_processes
    turns = TurnLocks(mine)
    cid, other = str(uuid.uuid4()), str(uuid.uuid4())
    assert not await turns.running(cid)
    if kind == "postgres":
        assert await theirs.try_acquire(lock_key(cid))
        assert await turns.running(cid) and not await turns.running(other)
        await theirs.release(lock_key(cid))
    else:
        offset = FileLocks._offset(lock_key(cid))
        holder = subprocess.Popen(
            [sys.executable, "-c", HOLD_IN_ANOTHER_PROCESS, str(path), str(offset)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert holder.stdout.readline().strip() == "held"
        assert await turns.running(cid) and not await turns.running(other)
        holder.stdin.close()
        holder.wait(30)
    assert not await turns.running(cid)


async def test_looking_never_takes_the_lock(two_processes):
    _, mine, _, _ = two_processes
    taken = []
    original = mine.try_acquire

    async def try_acquire(key):
        taken.append(key)
        return await original(key)

    mine.try_acquire = try_acquire
    turns = TurnLocks(mine)
    cid = str(uuid.uuid4())
    assert not await turns.running(cid)
    async with turns.hold(cid):
        assert await turns.running(cid)
    assert not await turns.running(cid)
    assert taken == [lock_key(cid)]  # the turn's own, and no look's
