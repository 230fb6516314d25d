"""What a spec turns into without Spark: session settings, fleet headroom, added brokers."""

import socket

import numpy as np
import pytest

from backend.engines.fleet import cluster_headroom, days_to_limit
from backend.errors import BadInput
from backend.model.snapshot import Limits
from backend.spark import session
from backend.spark.session import SparkSettings, check_reachable, settings_from
from backend.spark.sweeps import with_brokers_added
from backend.twin.generate import generate_snapshot


# ---- settings ------------------------------------------------------------------------------
def test_defaults_are_local_loopback_without_ui():
    s = settings_from(env={})
    assert s == SparkSettings(master="local[*]", remote=None, ui=False)
    assert not s.is_remote and s.where == "local[*]"


def test_arguments_beat_environment_beat_config():
    config = {"master": "spark://cfg:7077", "ui": True, "conf": {"spark.executor.memory": "1g"}}
    env = {"RAILYARD_SPARK_MASTER": "spark://env:7077"}
    assert settings_from(config=config, env={}).master == "spark://cfg:7077"
    assert settings_from(config=config, env=env).master == "spark://env:7077"
    s = settings_from(remote="sc://arg:15002", config=config, env=env)
    assert (s.remote, s.is_remote, s.where) == ("sc://arg:15002", True, "sc://arg:15002")
    assert s.ui and s.conf == (("spark.executor.memory", "1g"),)
    assert not settings_from(config=config, env={"RAILYARD_SPARK_UI": "0"}).ui


@pytest.mark.parametrize("kwargs, message", [
    ({"master": "spark://a:1", "remote": "sc://b:2"}, "not both"),
    ({"remote": "http://b:2"}, "sc://host:port"),
    ({"master": "mesos://x"}, "Spark master must be"),
    ({"config": {"mastr": "local"}}, "unknown key 'mastr'"),
    ({"config": {"conf": ["a"]}}, "'conf' must be a mapping"),
])
def test_bad_settings(kwargs, message):
    with pytest.raises(BadInput, match=message):
        settings_from(env={}, **kwargs)


def test_unreachable_cluster_fails_fast_with_one_line():
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for url in (f"spark://127.0.0.1:{port}", f"sc://127.0.0.1:{port}"):
        with pytest.raises(BadInput, match=f"Spark at {url} is unreachable"):
            check_reachable(url, timeout=1)
        with pytest.raises(BadInput, match="unreachable"):
            session.build_session(settings_from(
                master=url if url.startswith("spark") else None,
                remote=url if url.startswith("sc") else None, env={}))


def test_missing_java_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(BadInput, match="Java not found: Spark needs Java 17"):
        session.build_session(settings_from(master="local[1]", env={}))


# ---- fleet maths ------------------------------------------------------------------------------
def test_days_to_limit_edges():
    room = np.array([100.0, 0.0, 50.0, np.nan, 10.0])
    growth = np.array([10.0, 5.0, 0.0, 3.0, -1.0])
    assert days_to_limit(room, growth) == [10.0, 0.0, None, None, None]


def test_cluster_headroom_observes_growth_between_snapshots():
    limits = Limits(max_broker_partitions=200, max_partitions=1500)
    then = generate_snapshot(5, 0, 10, 200, 3, seed=1, limits=limits)
    now = generate_snapshot(6, 0, 10, 260, 3, seed=2, limits=limits)
    cols = cluster_headroom("east", [then, now], [0.0, 4 * 86400.0], None, limits)
    counts_now, counts_then = now.broker_replica_counts(), then.broker_replica_counts()
    assert cols["broker"] == [1, 2, 3, 4, 5, 6]
    assert cols["replicas"] == counts_now.tolist()
    assert cols["headroom"] == np.maximum(200 - counts_now, 0).tolist()
    assert cols["growth_per_day"][:5] == pytest.approx((counts_now[:5] - counts_then) / 4)
    assert cols["growth_per_day"][5] is None  # broker 6 joined after the first snapshot
    assert cols["cluster_replicas"][0] == 780
    assert cols["cluster_headroom"][0] == 1500 - 780
    assert cols["cluster_growth_per_day"][0] == pytest.approx((780 - 600) / 4)
    assert cols["cluster_days_to_limit"][0] == pytest.approx(720 / 45)


def test_cluster_headroom_with_given_growth_and_no_limit():
    snap = generate_snapshot(4, 2, 8, 120, 2, seed=4)
    cols = cluster_headroom("west", [snap], [None], 4.0, Limits())
    assert cols["growth_per_day"] == [4.0] * 4
    assert cols["headroom"] == [None] * 4 and cols["days_to_limit"] == [None] * 4
    assert cols["cluster_growth_per_day"][0] == 16.0
    assert cols["cluster_headroom"][0] is None


def test_added_brokers_are_empty_and_dealt_over_racks():
    snap = generate_snapshot(6, 3, 20, 300, 3, seed=3)
    more = with_brokers_added(snap, 4)
    assert more.broker_ids.tolist() == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    assert list(more.broker_racks[6:]) == ["r1", "r2", "r3", "r1"]
    assert more.broker_replica_counts()[6:].tolist() == [0, 0, 0, 0]
    assert (more.broker_replica_counts()[:6] == snap.broker_replica_counts()).all()
    assert with_brokers_added(snap, 0) is snap


def test_a_principal_without_a_quota_is_a_row_with_null_burst_not_nan():
    """A quota sweep row is JSON as `railyard quota replay` writes it: no quota, no burst
    (null), never NaN (which the .json output refuses)."""
    import json

    import pandas as pd

    from backend.spark.spec import QuotaSpec
    from backend.spark.sweeps import quota_rows

    requests = pd.DataFrame({"seq": [0, 1], "t": [0.0, 0.5], "user": ["u", "u"],
                             "client_id": ["", ""], "partitions": [10, 600],
                             "validate_only": [False, False]})
    row = quota_rows(requests, QuotaSpec("r.jsonl", {"rate": [5.0], "samples": [11]}),
                     {"scenario": 0, "rate": 5.0, "samples": 11})
    assert row["quota_entity"] is None and row["burst"] is None
    assert row["admitted"] == 2
    json.dumps(row, allow_nan=False)
