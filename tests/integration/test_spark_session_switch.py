"""One process, Spark Connect then classic Spark: `get_session` with other settings stops
the old session first, and the classic session that follows starts (pyspark leaves its
Connect mark in the environment, where child processes would inherit it too; Railyard
takes it back)."""

from __future__ import annotations

import os

import pytest

from backend.spark.session import CONNECT_MARK, get_session, is_connect, settings_from, stop_session
from tests import spark_servers

pytestmark = pytest.mark.integration


def test_a_classic_session_starts_after_a_connect_one(tmp_path):
    try:
        with spark_servers.connect_server(tmp_path, master="local[1]") as url:
            remote = get_session(settings_from(remote=url))
            assert is_connect(remote) and remote.range(4).count() == 4
            assert CONNECT_MARK in os.environ  # pyspark's, while the session is Connect's
            classic = get_session(settings_from(master="local[1]"))
        assert not is_connect(classic) and classic.range(5).count() == 5
        assert CONNECT_MARK not in os.environ
    finally:
        stop_session()
