"""The delete-partitions KIP's stages with a fixed clock: the stage machine
(engines.shrink_stages) and the twin answering DeletePartitions as a cluster implementing
the KIP would (delete.topic.partition.interval.delay.ms default 300000 ms; a delay of 0
means "deleted right away")."""

from __future__ import annotations

import pytest

from backend.engines.shrink import CHECK_INTERVAL_MS
from backend.engines.shrink_stages import check_at, observe
from backend.gateways.base import can_delete_partitions
from backend.twin.cluster import TwinCluster, TwinSettings
from backend.twin.gateway import TwinGateway
from tests.unit.test_executor import small_cluster

KIP_INTERVAL_MS = 300_000  # the KIP: delete.topic.partition.interval.delay.ms default


def test_the_default_check_interval_is_the_kips():
    assert CHECK_INTERVAL_MS == KIP_INTERVAL_MS


@pytest.mark.parametrize("due, expected", [
    (0, 0), (1, 300_000), (299_999, 300_000), (300_000, 300_000), (300_001, 600_000),
    (700_000, 900_000)])
def test_the_controller_checks_every_interval_from_its_start(due, expected):
    assert check_at(due) == expected
    assert check_at(due + 5, epoch_ms=5) == expected + 5


def test_stage_from_modes_with_times_to_the_next():
    removed = [2, 3]
    v = observe({0: "ReadWrite", 1: "ReadWrite", 2: "ReadWrite", 3: "ReadWrite"}, removed,
                None, 600_000)
    assert (v.stage, v.next_stage, v.next_earliest_ms) == ("ReadWrite", "ReadOnly", None)
    v = observe({2: "ReadOnly", 3: "ReadOnly"}, removed, 100_000, 600_000)
    assert v.stage == "ReadOnly" and v.counts["ReadOnly"] == 2
    # None at the first check at or after request + delay: within one interval of it
    assert (v.next_stage, v.next_earliest_ms, v.next_latest_ms) == ("None", 700_000, 1_000_000)
    v = observe({2: "None"}, removed, 100_000, 600_000)  # 3 already deleted
    assert v.stage == "None" and v.counts == {"ReadWrite": 0, "ReadOnly": 0, "None": 1,
                                              "Removed": 1}
    assert v.next_stage == "Removed" and v.next_earliest_ms is None
    v = observe({0: "ReadWrite", 1: "ReadWrite"}, removed, 100_000, 600_000)
    assert v.stage == "Removed" and v.next_stage is None and v.counts["Removed"] == 2


def test_immediate_delete_skips_read_only():
    assert observe({2: "ReadWrite"}, [2], None, 0).next_stage == "None"


def _twin(**kw) -> tuple[TwinCluster, TwinGateway]:
    twin = TwinCluster(small_cluster(), TwinSettings(traffic_noise=0.0, **kw))
    return twin, TwinGateway(twin)


def modes(gw: TwinGateway, topic: str = "a") -> list[str]:
    return [p["mode"] for p in gw.describe_topics([topic])[0]["partitions"]]


def test_twin_read_only_then_none_at_the_check_after_the_delay_then_removed():
    twin, gw = _twin()
    assert can_delete_partitions(gw)
    twin.advance(100)  # requested at 100 s, delay 600 s: due 700 s, checked at 900 s
    out = gw.delete_partitions("a", 2, 600_000)
    assert out["error"] is None and out["throttle_time_ms"] == 0
    assert out["partitions"] == [{"partition": p, "mode": "ReadOnly", "error": None}
                                 for p in (2, 3)]
    assert modes(gw) == ["ReadWrite", "ReadWrite", "ReadOnly", "ReadOnly"]
    twin.advance(799)
    assert twin.time_ms == 899_000 and modes(gw)[2:] == ["ReadOnly", "ReadOnly"]
    twin.advance(1)
    assert modes(gw) == ["ReadWrite", "ReadWrite", "None", "None"]
    twin.advance(1)  # every broker answered StopReplica: the partitions leave
    assert modes(gw) == ["ReadWrite", "ReadWrite"]
    assert twin.snap.topic_partition_count(twin.snap.topic_index("a")) == 2
    assert twin.snap.n_partitions == 4 and twin.snap.replicas_of(
        twin.snap.partition_row("b", 1)) == [2, 4]


def test_twin_produce_traffic_leaves_read_only_partitions():
    twin, gw = _twin()
    twin.state.base_rate[:] = 1000.0
    twin.set_traffic(1.0)  # retention caps logs at the new rate
    gw.delete_partitions("a", 3, 60_000)
    before = twin.state.log_size.copy()
    twin.advance(10)
    grown = twin.state.log_size - before
    assert grown[3] == 0 and grown[:3].min() > 0  # a-3 is read-only: its share moved


def test_twin_immediate_delete_goes_none_then_removed_next_step():
    twin, gw = _twin()
    assert gw.delete_partitions("a", 1, 0)["partitions"][0]["mode"] == "None"
    twin.advance(1)
    assert modes(gw) == ["ReadWrite"]


def test_twin_a_dead_broker_holds_removal_until_it_returns():
    twin, gw = _twin()
    twin.fail_broker(4)  # a-3 has a replica on 4
    gw.delete_partitions("a", 3, 0)
    twin.advance(30)
    assert modes(gw) == ["ReadWrite"] * 3 + ["None"]
    twin.recover_broker(4)
    twin.advance(1)
    assert modes(gw) == ["ReadWrite"] * 3


def test_twin_refusals_in_kafka_error_names():
    twin, gw = _twin()
    assert gw.delete_partitions("nope", 1, 0)["error"] == "UNKNOWN_TOPIC_OR_PARTITION"
    assert gw.delete_partitions("a", 4, 0)["error"] == "INVALID_PARTITIONS"
    assert gw.delete_partitions("a", 2, 10)["error"] is None
    assert "already deleting" in gw.delete_partitions("a", 1, 10)["message"]
    twin.alter_reassignments({"version": 1, "partitions": [
        {"topic": "b", "partition": 1, "replicas": [3, 4]}]})
    assert gw.delete_partitions("b", 1, 10)["error"] == "REASSIGNMENT_IN_PROGRESS"


def test_twin_charges_the_mutation_quota_per_partition_deleted():
    _, gw = _twin()
    gw.alter_client_quota(None, "railyard", 0.1)  # burst 11 x 1 x 0.1 = 1.1 tokens
    assert gw.delete_partitions("a", 1, 10, client_id="railyard")["error"] is None
    again = gw.delete_partitions("b", 1, 10, client_id="railyard")  # tokens 1.1 - 3 < 0
    assert again["error"] == "THROTTLING_QUOTA_EXCEEDED"
    assert again["throttle_time_ms"] == round(1.9 / 0.1 * 1000)


def test_a_twin_with_the_feature_off_says_so():
    _, gw = _twin(delete_partition_enable=False)
    assert not can_delete_partitions(gw)
    assert gw.delete_partitions("a", 2, 0)["error"] == "INVALID_REQUEST"


@pytest.mark.parametrize("enable", [True, False])
def test_over_the_twins_http_api(tmp_path, enable):
    """The same calls through the twin's HTTP API and its writing gateway (with the
    token): the capability, DeletePartitions and each partition's mode."""
    from backend.gateways.config import Secret
    from backend.gateways.twin_http import TwinHttpWriter
    from backend.twin.api import TwinApi

    twin, gw = _twin(delete_partition_enable=enable)
    api = TwinApi(gw, token="t0k").start()
    try:
        (tmp_path / "token").write_text("t0k\n")
        client = TwinHttpWriter(api.url, Secret(file=str(tmp_path / "token")))
        assert can_delete_partitions(client) is enable
        out = client.delete_partitions("a", 3, 0, client_id="railyard")
        if not enable:
            assert out["error"] == "INVALID_REQUEST"
            return
        assert out["partitions"] == [{"partition": 3, "mode": "None", "error": None}]
        assert [p["mode"] for p in client.describe_topics(["a"])[0]["partitions"]] == \
            ["ReadWrite"] * 3 + ["None"]
        twin.advance(1)
        assert len(client.describe_topics(["a"])[0]["partitions"]) == 3
    finally:
        api.stop()
