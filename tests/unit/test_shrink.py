"""Partition shrinks (the delete-partitions KIP) and the migration that works today."""

import pytest

from backend.engines.shrink import CHECK_INTERVAL_MS, plan_shrink
from backend.errors import BadInput
from backend.model.io import snapshot_from_dict
from backend.model.snapshot import Limits
from backend.services.shrink import shrink_plan

DOC = {
    "cluster": "c",
    "brokers": [{"id": 1}, {"id": 2}, {"id": 3}],
    "topics": [
        {"name": "orders", "keyed": True, "retention_ms": 86_400_000, "partitions": [
            {"partition": p, "replicas": [1 + p % 3, 1 + (p + 1) % 3], "size_bytes": 100 * (p + 1),
             "bytes_in_per_sec": 10.0} for p in range(5)]},
        {"name": "logs", "partitions": [{"partition": 0, "replicas": [1]},
                                        {"partition": 1, "replicas": [2]}]},
        {"name": "__consumer_offsets", "partitions": [{"partition": 0, "replicas": [1, 2, 3]}]},
    ],
}


def snap():
    return snapshot_from_dict(DOC)


def test_highest_numbered_partitions_go():
    out = shrink_plan(snap(), "orders", 2, Limits(6))
    assert out["from"] == 5 and out["to"] == 2
    assert out["removed_partitions"] == [2, 3, 4]
    # sizes 300, 400, 500, two replicas each
    assert out["bytes_reclaimed"] == 2 * (300 + 400 + 500)
    assert out["replicas_reclaimed"] == 6
    # before: orders 10 replicas over 1,2,3 + logs on 1 and 2
    assert out["broker_partitions_after"] == {"1": 2, "2": 3, "3": 1}
    assert out["capacity_after"] == {"1": 4, "2": 3, "3": 5}


def test_stages_default_to_retention_then_none_then_removal():
    plan = plan_shrink(snap(), "orders", 3)
    day = 86_400_000
    assert [(s["mode"], s["at_ms"], s["latest_at_ms"]) for s in plan.stages] == [
        ("ReadOnly", 0, 0), ("None", day, day + CHECK_INTERVAL_MS),
        ("Removed", day, day + CHECK_INTERVAL_MS)]
    assert "StopReplica" in plan.stages[2]["effect"]
    assert [(s["mode"], s["at_ms"], s["latest_at_ms"]) for s in
            plan_shrink(snap(), "orders", 3, delay_ms=0).stages] == [
        ("None", 0, 0), ("Removed", 0, 0)]


def test_warnings_an_operator_needs():
    w = " | ".join(plan_shrink(snap(), "orders", 3, delay_ms=1000).warnings)
    assert "cannot delete partitions" in w and "delete.topic.partition.enable" in w
    assert "keyed" in w and "per-key ordering" in w
    assert "shorter than retention.ms" in w
    assert "the delay, 1 s (1,000 ms), is shorter" in w  # the config's ms beside it
    assert "take 20 B/s" in w  # partitions 3 and 4 at 10 B/s each
    unkeyed = " | ".join(plan_shrink(snap(), "logs", 1).warnings)
    assert "keyed" not in unkeyed and "B/s" not in unkeyed


def test_the_risk_that_the_cluster_cannot_delete_partitions_only_where_true():
    """The preview named "Apache Kafka cannot delete partitions ..." as a risk on the twin
    too, which implements the KIP: the engine leaves it out when its caller knows the
    cluster deletes partitions, and names it on Apache Kafka and where it is not known."""
    from backend.engines.shrink import NO_DELETE_PARTITIONS

    def risks(deletes):
        return plan_shrink(snap(), "orders", 3, deletes_partitions=deletes).warnings

    assert NO_DELETE_PARTITIONS not in risks(True)
    assert risks(False)[0] == risks(None)[0] == NO_DELETE_PARTITIONS
    assert risks(True) == risks(False)[1:]  # the other risks stay
    assert NO_DELETE_PARTITIONS not in shrink_plan(snap(), "orders", 3, Limits(6),
                                                   deletes_partitions=True)["warnings"]


def test_what_a_gateway_says_of_deleting_partitions():
    from backend.gateways.base import ClusterReader
    from backend.services.plan_kinds.shrink import deletes_partitions
    from backend.twin.cluster import TwinCluster, TwinSettings
    from backend.twin.gateway import TwinGateway

    for enabled in (True, False):  # the twin implements the KIP, with its config on or off
        twin = TwinCluster(snap(), TwinSettings(delete_partition_enable=enabled))
        assert deletes_partitions(TwinGateway(twin)) is enabled

    class Kafka(ClusterReader):  # a gateway without the KIP's calls, as Apache Kafka's
        pass

    assert deletes_partitions(Kafka()) is False
    assert deletes_partitions(None) is None  # no gateway here: not known


@pytest.mark.parametrize("topic,m,message", [
    ("orders", 5, "1 <= --partitions < 5"),
    ("orders", 0, "1 <= --partitions < 5"),
    ("orders", 9, "1 <= --partitions < 5"),
    ("nope", 1, "'nope' is not in cluster"),
    ("__consumer_offsets", 1, "internal"),
])
def test_bad_input(topic, m, message):
    with pytest.raises(BadInput, match=message):
        plan_shrink(snap(), topic, m)


def test_migration_is_placed_by_the_limit_engine():
    out = shrink_plan(snap(), "orders", 2, Limits(6))["migration"]
    assert out["ok"] and out["new_topic"] == "orders.p2"
    assert all(len(set(r)) == 2 for r in out["assignment"].values())
    assert len(out["steps"]) == 4 and "pausing them" in out["steps"][1]
    # while both topics exist the cluster holds old + new replicas
    assert out["peak_cluster_partitions"] == 12 + 4
    full = shrink_plan(snap(), "orders", 4, Limits(5))["migration"]
    assert not full["ok"] and "max.broker.partitions=5" in full["error"]


def test_migration_name_clash():
    with pytest.raises(BadInput, match="already exists"):
        shrink_plan(snap(), "orders", 2, Limits(), new_topic="logs")


def test_a_plans_delay_is_at_most_30_days():
    """A shrink waits out its delay executing, and one plan executes at a time on a
    cluster: a delay of 1e9 h (114,000 years) was proposed, and would have held the
    cluster's executor for good. A plan's delay, given or retention.ms's, is at most 30
    days; the engine (the CLI's what-if) keeps Kafka's range, a long."""
    from backend.engines.shrink import API_FIELDS
    from backend.services.plan_preview import MAX_SHRINK_DELAY_DAYS, from_shrink

    days = MAX_SHRINK_DELAY_DAYS * 86_400_000
    assert from_shrink(snap(), "orders", 2, delay_ms=days).content["delay_ms"] == days
    with pytest.raises(BadInput) as e:
        from_shrink(snap(), "orders", 2, delay_ms=days + 1, fields=API_FIELDS)
    assert str(e.value) == (
        "delay_ms: 720.0 h is more than 30 days (720 h): a shrink waiting out its delay holds "
        "its cluster's executor, and the plans executed after it wait behind it; give a "
        "shorter delay")
    long = {**DOC, "topics": [{**DOC["topics"][0], "retention_ms": days + 1}]}
    with pytest.raises(BadInput, match=r"^--delay-ms: 720.0 h \(the topic's retention.ms, its "
                                       r"default\) is more than 30 days"):
        from_shrink(snapshot_from_dict(long), "orders", 2)
    assert plan_shrink(snap(), "orders", 2, delay_ms=10**15).delay_ms == 10**15
