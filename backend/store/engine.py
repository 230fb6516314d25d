"""Connections to the plan store: a SQLite file by default, PostgreSQL by URL.

SQLite runs in WAL mode (readers never block the writer) and a write transaction starts
with BEGIN IMMEDIATE, so two writers queue on the database lock instead of failing
half-way; reads use a plain deferred BEGIN. PostgreSQL uses psycopg 3 at READ COMMITTED:
the conditional updates and the audit lock in backend.store.audit keep it correct there.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

import orjson
from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError

from backend.errors import BadInput, shown_url

DEFAULT_URL = "sqlite:///var/railyard.db"
MIGRATIONS = Path(__file__).with_name("migrations")
_WRITE = "railyard_write"  # execution option marking a write transaction
_MIGRATION_LOCK = 7_351_811  # pg_advisory_lock key: one process migrates at a time
_BUSY_SECONDS = 60  # how long a SQLite connection waits for the database lock
# how long a PostgreSQL connection attempt may take, unless the URL's ?connect_timeout=
# says (libpq's connect_timeout, PostgreSQL docs, libpq "Parameter Key Words"; at least
# 2 s): without it a host that accepts the TCP connection and never answers holds
# `railyard audit verify` (or a page) silent for minutes
CONNECT_TIMEOUT_SECONDS = 10


def json_dumps(value: Any) -> str:
    """JSON columns as the json module writes them, value for value, at orjson's speed (a
    100k-move plan's content is 6 MB: 0.1 s in json, 0.02 s in orjson). orjson writes NaN
    and infinities as null and refuses integers past 64 bits: text holding a null, or a
    value orjson refuses, is written by the json module instead, so what is read back
    never changes. (Reading stays with json: decoding 100k small objects is allocation,
    where orjson gains little.)"""
    try:
        out = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
    except TypeError:
        return json.dumps(value)
    return json.dumps(value) if b"null" in out else out.decode()


def make_engine(url: str) -> Engine:
    """An Engine for ``url`` (sqlite:///path or postgresql+psycopg://...); BadInput when
    the URL is not one Railyard can use."""
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):  # ValueError: a port that is not a number
        raise BadInput(f"store.url: not a database URL: {shown_url(url)!r}") from None
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
            _owner_only(parsed.database)
        engine = create_engine(parsed, connect_args={"check_same_thread": False,
                                                     "timeout": _BUSY_SECONDS},
                               json_serializer=json_dumps)
        _sqlite_transactions(engine)
        return engine
    if backend == "postgresql":
        if parsed.get_driver_name() != "psycopg":
            parsed = parsed.set(drivername="postgresql+psycopg")
        connect = {} if "connect_timeout" in parsed.query else {
            "connect_timeout": CONNECT_TIMEOUT_SECONDS}
        try:
            return create_engine(parsed, pool_size=25, max_overflow=10,
                                 json_serializer=json_dumps, connect_args=connect)
        except NoSuchModuleError:
            raise BadInput(f"store.url: no driver for {parsed.drivername}") from None
    raise BadInput(f"store.url: {backend} is not supported (use sqlite:///path or "
                   f"postgresql+psycopg://user@host/db)")


def _owner_only(path: str) -> None:
    """A new database file readable by its owner alone (plans, audit rows, client
    addresses and session hashes live in it; SQLite gives its -wal and -shm files the
    database file's mode). An existing file keeps the mode it was given."""
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))


def _sqlite_transactions(engine: Engine) -> None:
    """Take over BEGIN from pysqlite: WAL, foreign keys, and BEGIN IMMEDIATE for writes."""

    @event.listens_for(engine, "connect")
    def _connect(dbapi_conn, _record) -> None:
        dbapi_conn.isolation_level = None  # we emit BEGIN ourselves
        _switch_to_wal(dbapi_conn)
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _begin(conn) -> None:
        write = conn.get_execution_options().get(_WRITE)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")


def _switch_to_wal(dbapi_conn: sqlite3.Connection) -> None:
    """PRAGMA journal_mode=WAL, retried while the database is locked. On a new file the
    first connections race to switch it; SQLite answers the loser "database is locked" at
    once, without its busy handler, to break the deadlock (two readers each waiting for
    the other to let go). The mode is stored in the file, so later opens only read it."""
    deadline = time.monotonic() + _BUSY_SECONDS
    while True:
        try:
            dbapi_conn.execute("PRAGMA journal_mode=WAL").fetchall()
            return
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def writer(engine: Engine) -> Engine:
    """The same pool, marked so its transactions are write transactions."""
    return engine.execution_options(**{_WRITE: True})


def migrate(engine: Engine) -> None:
    """Bring the schema to the newest Alembic revision (idempotent; serialised across
    processes on PostgreSQL by an advisory lock, on SQLite by the write lock)."""
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    with writer(engine).begin() as conn:
        if engine.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _MIGRATION_LOCK})
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")
