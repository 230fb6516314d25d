"""Helpers for the executor tests on the session's Apache Kafka cluster: topics of their own
("ex-" prefix, placed explicitly), the same incompressible data in each, and reads of the
replication throttle configs (KIP-73) and reassignments.

The cluster is shared with other tests: these helpers only create, fill and delete the
topics they are given, and `throttle_state` reads configs without changing them."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable
from typing import Any

from kafka.admin import ConfigResource

from backend.gateways.base import METADATA_LAG_SECONDS
from backend.gateways.kafka import KafkaGateway

LEADER_RATE = "leader.replication.throttled.rate"
FOLLOWER_RATE = "follower.replication.throttled.rate"
LEADER_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_REPLICAS = "follower.replication.throttled.replicas"
THROTTLE_KEYS = (LEADER_RATE, FOLLOWER_RATE, LEADER_REPLICAS, FOLLOWER_REPLICAS,
                 "replica.alter.log.dirs.io.max.bytes.per.second")
RECORD = 16 * 1024  # bytes per record: random, so the log size is the data size


def wait_until(check: Callable[[], Any], timeout: float, what: str,
               every: float = 0.2) -> Any:
    """``check()``'s first truthy answer, polled until ``timeout`` seconds; AssertionError
    naming ``what`` (and the last answer) when it never comes."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(every)
    raise AssertionError(f"still waiting after {timeout:g} s for {what} (last: {last!r})")


def create_placed(gw: KafkaGateway, topics: dict[str, list[list[int]]]) -> None:
    """Create each topic with exactly this placement (replica lists, leader first) and
    wait until every partition has a leader and its whole replica set in sync."""
    results = gw.create_topics([{"name": n, "assignment": a} for n, a in topics.items()])
    bad = [r for r in results if r.get("error")]
    assert not bad, bad

    def placed() -> dict | None:
        got = gw.describe_topics(list(topics), missing_ok=True)
        ok = len(got) == len(topics) and all(
            p["leader"] in p["replicas"] and sorted(p["isr"]) == sorted(p["replicas"])
            for t in got for p in t["partitions"])
        return {t["name"]: [p["replicas"] for p in t["partitions"]] for t in got} if ok \
            else None
    assert wait_until(placed, 60, f"topics {sorted(topics)} to be ready") == topics


def delete_topics(gw: KafkaGateway, names: Iterable[str]) -> None:
    """Delete these topics (those that exist) and wait until the cluster no longer lists
    them."""
    names = [n for n in names if n.startswith("ex-")]  # never another test's topic
    present = [t["name"] for t in gw.describe_topics(names, missing_ok=True)]
    if present:
        gw.delete_topics(present)
        wait_until(lambda: not gw.describe_topics(present, missing_ok=True), 60,
                   f"topics {present} to be deleted")


def producer(bootstrap: list[str]):
    """kafka-python's KafkaProducer, every record acknowledged by all in-sync replicas."""
    from kafka import KafkaProducer
    return KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=20,
                         batch_size=256 * 1024, max_request_size=2 * 1024 * 1024,
                         client_id="railyard-ex-producer")


def fill(bootstrap: list[str], topics: list[str], sizes: list[int], seed: int = 7) -> int:
    """Write ``sizes[p]`` bytes of the same seeded random records into partition ``p`` of
    each topic (so identical topics hold identical data); the bytes written per topic."""
    prod = producer(bootstrap)
    try:
        rng = random.Random(seed)
        records = [rng.randbytes(RECORD) for _ in range(max(sizes) // RECORD)]
        for topic in topics:
            for p, size in enumerate(sizes):
                for value in records[:size // RECORD]:
                    prod.send(topic, value=value, partition=p)
        prod.flush(120)
    finally:
        prod.close(10)
    return sum(size // RECORD * RECORD for size in sizes)


def throttle_state(gw: KafkaGateway, brokers: Iterable[int],
                   topics: Iterable[str]) -> dict[tuple[str, str], dict[str, str]]:
    """Every replication throttle config set on these brokers (and the broker default)
    and topics: {(entity type, name): {key: value}}, entities without one left out."""
    out = {}
    for etype, names in (("broker", ["<default>", *map(str, brokers)]),
                         ("topic", list(topics))):
        for name in names:
            cfg = gw.describe_configs(etype, name)["configs"]
            found = {k: v for k, v in cfg.items() if k in THROTTLE_KEYS}
            if found:
                out[(etype, name)] = found
    return out


def served(read: Callable[[], Any], want: Any, what: str) -> None:
    """Assert ``read()`` of Metadata comes to ``want`` within METADATA_LAG_SECONDS: the
    answering broker may not have applied the controller's last reassignment record yet,
    as the executor itself allows (configs need no wait: the gateway reads an alter back
    on every broker before it answers)."""
    deadline = time.monotonic() + METADATA_LAG_SECONDS
    while (got := read()) != want and time.monotonic() < deadline:
        time.sleep(0.2)
    assert got == want, f"{what}: {got!r} != {want!r}"


def in_flight(gw: KafkaGateway, topics: Iterable[str]) -> dict[tuple[str, int], dict]:
    """The reassignments in flight on these topics (ListPartitionReassignments)."""
    wanted = set(topics)
    return {(r["topic"], r["partition"]): r for r in gw.list_reassignments()
            if r["topic"] in wanted}


def replicas(gw: KafkaGateway, topics: list[str]) -> dict[str, list[list[int]]]:
    """Each topic's replica lists, partition by partition."""
    return {t["name"]: [p["replicas"] for p in t["partitions"]]
            for t in gw.describe_topics(topics)}


def log_sizes(gw: KafkaGateway, topics: list[str]) -> dict[tuple[str, int, int], int]:
    """(topic, partition, broker) -> bytes in that broker's log of the partition: the
    DescribeLogDirs request the gateway reads log sizes with, sent to each live broker
    (future logs of a move in flight left out)."""
    from kafka.protocol.admin import DescribeLogDirsRequest
    out: dict[tuple[str, int, int], int] = {}
    for b in [b["id"] for b in gw.describe_cluster()["brokers"] if b["alive"]]:
        resp = gw._send("DescribeLogDirs", DescribeLogDirsRequest(topics=None), b)
        for d in resp.results:
            for t in d.topics:
                if t.name in topics:
                    for p in t.partitions:
                        if not p.is_future_key:
                            out[(t.name, p.partition_index, b)] = p.partition_size
    return out


def raw_rates(raw, brokers: Iterable[int]) -> dict[str, dict[str, str]]:
    """The KIP-73 rates set on each broker, as kafka-python's admin client ``raw`` reads
    them (dynamic configs)."""
    got = raw.describe_configs([ConfigResource("broker", str(b)) for b in brokers])
    out = {}
    for b in brokers:
        cfg = got["broker"][str(b)]
        rates = {k: v["value"] for k, v in cfg.items()
                 if k in (LEADER_RATE, FOLLOWER_RATE) and v["value"] is not None
                 and v["config_source"] == "DYNAMIC_BROKER_CONFIG"}
        if rates:
            out[str(b)] = rates
    return out


def delete_group(bootstrap: Iterable[str], group: str) -> None:
    """Delete consumer group ``group`` when the cluster has it (a test's own, at its end)."""
    from kafka import KafkaAdminClient
    admin = KafkaAdminClient(bootstrap_servers=list(bootstrap))
    try:
        if any(g["group_id"] == group for g in admin.list_groups()):
            admin.delete_groups([group])
    finally:
        admin.close()
