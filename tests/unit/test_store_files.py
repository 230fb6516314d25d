"""A new SQLite store is its owner's alone: plans, audit rows, client addresses and
session hashes live in it, and SQLite gives its -wal and -shm files the database file's
mode (they were 0644 under the usual umask). The background jobs' directory likewise."""

from __future__ import annotations

import os
import stat

import pytest

from backend.store.store import open_store
from dashboard import jobs
from dashboard.config import CacheSettings


@pytest.fixture
def usual_umask():
    before = os.umask(0o022)
    yield
    os.umask(before)


def _modes(folder) -> dict[str, int]:
    return {p.name: stat.S_IMODE(p.stat().st_mode) for p in folder.iterdir()
            if p.name.startswith("plans.db") and p.is_file()}


def test_a_new_store_and_its_wal_are_readable_by_their_owner_alone(tmp_path, usual_umask):
    store = open_store(f"sqlite:///{tmp_path}/var/plans.db", key_file=str(tmp_path / "keys"))
    try:
        assert {name: mode for name, mode in _modes(tmp_path / "var").items()
                if not name.endswith("writer-lock")} == {
            "plans.db": 0o600, "plans.db-wal": 0o600, "plans.db-shm": 0o600}
    finally:
        store.close()


def test_an_existing_store_keeps_the_mode_it_was_given(tmp_path, usual_umask):
    url = f"sqlite:///{tmp_path}/plans.db"
    open_store(url, key_file=str(tmp_path / "keys")).close()
    os.chmod(tmp_path / "plans.db", 0o640)  # say, for the operator's backup group
    open_store(url, key_file=str(tmp_path / "keys")).close()
    assert _modes(tmp_path)["plans.db"] == 0o640


def test_the_background_jobs_directory_is_the_owners(tmp_path, usual_umask):
    folder = tmp_path / "jobs"
    jobs.manager(CacheSettings(background_dir=str(folder)))
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
