"""The executor's records on both stores (SQLite and a real PostgreSQL): racers for a
cluster's lease get exactly one winner, a plan runs to completion with its config book,
restoring every throttle, and throttle sightings keep their first time."""

from __future__ import annotations

from backend.executor.freeze import executable_content
from backend.executor.loop import Executor
from backend.store.executions import ExecutionRecords
from backend.store.store import open_store
from backend.twin.cluster import TwinCluster, TwinSettings
from tests.executor_rig import CountingGateway, ListJournal
from tests.unit.test_executor import MB, plan, small_cluster
from tests.unit.test_executor_lease import race


def test_lease_race_has_one_winner(store_url):
    store = open_store(store_url)
    try:
        records = ExecutionRecords(store)
        for round_ in range(3):
            assert len(race(records, f"c{round_}", 8, now=0.0)) == 1
        assert len(race(records, "c0", 8, now=100.0)) == 1  # all take over an expired lease
    finally:
        store.close()


def test_a_plan_runs_and_restores_its_throttles(store_url):
    store = open_store(store_url)
    try:
        records = ExecutionRecords(store)
        twin = TwinCluster(small_cluster(), TwinSettings(traffic_noise=0.0))
        twin.alter_configs("topic", "a", {"leader.replication.throttled.replicas": "*"})
        gw = CountingGateway(twin)
        content = executable_content(twin.assignment(), plan(("a", 0, [3, 2]), ("b", 1, [2, 3])),
                                     MB, per_broker=1)
        records.create(7, "small", content, "0" * 64,
                       [len(b) for b in content["execution"]["batches"]], "olga", 0.0)
        executor = Executor(records, gw, ListJournal(records.store))
        for _ in range(200):
            ex = executor.tick(7, twin.now_seconds)
            if ex.state == "completed":
                break
            twin.advance(1.0)
        assert ex.state == "completed" and dict(gw.starts) == {"a-0": 1, "b-1": 1}
        assert twin.topic_configs["a"] == {"leader.replication.throttled.replicas": "*"}
        assert not any("throttled" in k for cfg in twin.broker_configs.values() for k in cfg)
    finally:
        store.close()


def test_throttle_sightings_keep_the_first_time_per_value(store_url):
    """When Railyard first saw each throttle config: kept while the value stays, renewed
    when it changes or comes back after going, kept for a config an executing plan holds
    (backend/store/sightings.py), per cluster."""
    from backend.store.sightings import sightings

    store = open_store(store_url)
    try:
        rate = ("broker", "1", "leader.replication.throttled.rate")
        lists = ("topic", "t", "follower.replication.throttled.replicas")
        assert sightings(store, "seen", {rate: "1", lists: "0:1"}, set(), 10.0) == {
            rate: 10.0, lists: 10.0}
        assert sightings(store, "seen", {rate: "1", lists: "0:2"}, set(), 20.0) == {
            rate: 10.0, lists: 20.0}
        assert sightings(store, "elsewhere", {rate: "1"}, set(), 30.0) == {rate: 30.0}
        assert sightings(store, "seen", {}, {rate}, 40.0) == {}  # rate held, lists gone
        assert sightings(store, "seen", {rate: "1", lists: "0:2"}, set(), 50.0) == {
            rate: 10.0, lists: 50.0}
    finally:
        store.close()
