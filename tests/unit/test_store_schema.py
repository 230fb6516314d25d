"""The Alembic migrations build exactly the tables backend/store/schema.py declares, and
the config's store and plans keys are validated."""

from __future__ import annotations

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from backend.errors import BadInput
from backend.store.engine import make_engine
from backend.store.schema import metadata
from backend.store.store import open_store
from dashboard.config import parse_config

CLUSTERS = {"clusters": [{"name": "c1", "gateway": {"type": "twin", "url": "http://x:1"}}]}


def test_migrations_match_the_schema(tmp_path):
    store = open_store(f"sqlite:///{tmp_path}/s.db")
    with store.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), metadata)
    store.close()
    assert diff == []


def test_open_is_idempotent_and_creates_the_directory(tmp_path):
    url = f"sqlite:///{tmp_path}/deep/er/s.db"
    open_store(url).close()
    open_store(url).close()
    assert (tmp_path / "deep" / "er" / "s.db").exists()


@pytest.mark.parametrize("url,match", [
    ("mysql://x/y", "mysql is not supported"),
    ("::", "not a database URL"),
])
def test_bad_store_urls(url, match):
    with pytest.raises(BadInput, match=match):
        make_engine(url)


def test_config_store_and_plans_keys():
    config = parse_config(CLUSTERS)
    assert config.store.url == "sqlite:///var/railyard.db"
    assert config.plans.expiry_hours == 24
    config = parse_config({**CLUSTERS, "store": {"url": "postgresql+psycopg://r@127.0.0.1/r"},
                           "plans": {"expiry_hours": 2}})
    assert config.store.url.startswith("postgresql") and config.plans.expiry_hours == 2
    with pytest.raises(BadInput, match=r"store\.url: expected sqlite:///path"):
        parse_config({**CLUSTERS, "store": {"url": "redis://x"}})
    with pytest.raises(BadInput, match=r"plans\.expiry: unknown key"):
        parse_config({**CLUSTERS, "plans": {"expiry": 2}})
