"""Fixtures shared by integration tests: the plan store on SQLite and on PostgreSQL."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import psycopg
import pytest
from sqlalchemy.engine import make_url

from tests.servers import postgres_server

_databases = itertools.count()


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """One PostgreSQL server for the session (started on first use, stopped at the end)."""
    yield from postgres_server()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request, tmp_path) -> str:
    """A fresh, empty plan store URL: a SQLite file, or a new database on the session's
    PostgreSQL server. Tests taking it run once on each."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/railyard.db"
    server = make_url(request.getfixturevalue("postgres_url"))
    name = f"railyard_{next(_databases)}"
    dsn = server.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return server.set(database=name).render_as_string(hide_password=False)
