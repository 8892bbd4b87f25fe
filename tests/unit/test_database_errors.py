"""One reading of database errors: what a driver's error says about the database."""

import errno
import sqlite3

import psycopg
import pytest
from psycopg_pool import PoolTimeout

from keel.checkpoints.trouble import Trouble, trouble_of

CASES = [
    (sqlite3.OperationalError("attempt to write a readonly database"), Trouble.READ_ONLY),
    (sqlite3.OperationalError("database or disk is full"), Trouble.FULL),
    (sqlite3.OperationalError("database is locked"), Trouble.UNAVAILABLE),
    (sqlite3.OperationalError("disk I/O error"), Trouble.UNAVAILABLE),
    (psycopg.errors.ReadOnlySqlTransaction("read-only transaction"), Trouble.READ_ONLY),
    (psycopg.errors.DiskFull("could not extend file"), Trouble.FULL),
    (psycopg.OperationalError("server closed the connection"), Trouble.UNAVAILABLE),
    (PoolTimeout("no connection in 5 seconds"), Trouble.UNAVAILABLE),
    (ConnectionRefusedError(errno.ECONNREFUSED, "refused"), Trouble.UNAVAILABLE),
    (sqlite3.OperationalError("no such table: keel_tasks"), None),
    (sqlite3.IntegrityError("UNIQUE constraint failed"), None),
    (psycopg.errors.UniqueViolation("duplicate key"), None),
    (FileNotFoundError(errno.ENOENT, "no such file"), None),
    (ValueError("bad"), None),
]


@pytest.mark.parametrize(("error", "trouble"), CASES)
def test_every_caller_reads_an_error_the_same_way(error, trouble):
    assert trouble_of(error) is trouble
