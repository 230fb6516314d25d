"""Fixtures shared by integration tests: the plan store on SQLite and on PostgreSQL, and a
Tansu broker (a real Kafka-protocol server) per module with a Kafka gateway on it."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import psycopg
import pytest
from sqlalchemy.engine import make_url

from backend.gateways.config import parse_kafka
from backend.gateways.kafka import KafkaGateway
from tests.servers import postgres_server, tansu_broker

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


@pytest.fixture(scope="module")
def bootstrap(tmp_path_factory) -> Iterator[str]:
    """A Tansu broker for the module's tests: its bootstrap address."""
    yield from tansu_broker(tmp_path_factory)


@pytest.fixture(scope="module")
def gw(bootstrap) -> Iterator[KafkaGateway]:
    """Railyard's Kafka gateway on that broker."""
    g = KafkaGateway(parse_kafka({"bootstrap_servers": [bootstrap], "timeout_seconds": 5},
                                 lambda key: f"cfg: {key}"), "tansu")
    yield g
    g.close()
