"""An approved shrink on Apache Kafka, which cannot delete partitions: Execute is refused in
one line naming the migration; the migration's CreateTopics then runs through the Kafka
gateway under a KIP-599 controller_mutation_rate quota on the gateway's own client id,
is throttled by the controller, waits the time Kafka said, and creates the new topic
placed exactly as approved; the operator's checks complete the plan.

KIP-599's numbers on Kafka's defaults: burst = rate x controller.quota.window.num (11) x
controller.quota.window.size.seconds (1), so 1 partition/s holds 11 tokens; a strict-mode
request (CreateTopics v6+) is admitted while the bucket holds >= 0 tokens and charged its
partitions, and a rejected one carries throttle_time_ms = -tokens / rate x 1000
(core/src/main/scala/kafka/server/ControllerMutationQuotaManager.scala)."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest

from backend.errors import Conflict
from backend.gateways.config import parse_kafka
from backend.gateways.kafka import KafkaGateway
from backend.model.snapshot import Limits
from backend.services import execution, plan_preview, plans, shrink_execution
from backend.services.cluster import ClusterSource
from backend.store.store import open_store
from tests.integration.kafka_prometheus import poll
from tests.kafka_moves import create_placed, delete_group, delete_topics, producer, wait_until
from tests.kafka_tools import kafka_group_lag
from tests.plan_helpers import APPROVER, OPERATOR

pytestmark = pytest.mark.integration

CLIENT = "ry-migration"  # the gateway's configured client id (not the default "railyard")
RATE = 1.0  # partitions/s: a bucket of 11 tokens
DRAIN = 16  # partitions created first as the same client: 11 - 16 = -5 tokens, about 5 s
TOPIC, NEW, DRAINER = "ex-mig-orders", "ex-mig-orders.p3", "ex-mig-drain"
GROUP = "ex-mig-billing"  # a consumer group of the old topic
PLACEMENT = [[1, 2], [2, 3], [3, 1], [1, 3], [2, 1], [3, 2]]  # racks r0, r1, r2


@pytest.fixture
def gw(kafka_cluster, kafka_gateway):
    """A gateway as an operator would configure one with its own client id; the quota,
    and this test's topics, gone afterwards."""
    own = KafkaGateway(parse_kafka({"bootstrap_servers": kafka_cluster.bootstrap_servers,
                                    "client_id": CLIENT, "timeout_seconds": 10},
                                   lambda key: f"cfg: {key}"), "kafka")
    delete_topics(kafka_gateway, [TOPIC, NEW, DRAINER])
    try:
        yield own
    finally:
        own.close()
        kafka_gateway.alter_client_quota(None, CLIENT, None)
        delete_topics(kafka_gateway, [TOPIC, NEW, DRAINER])
        delete_group(kafka_cluster.bootstrap_servers, GROUP)


def commit(bootstrap: list[str], offsets: dict[int, int]) -> None:
    """GROUP commits ``offsets`` (partition -> offset) on the old topic, as a consumer
    that read that far does."""
    from kafka import KafkaConsumer, OffsetAndMetadata, TopicPartition
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=GROUP,
                             enable_auto_commit=False)
    try:
        consumer.commit({TopicPartition(TOPIC, p): OffsetAndMetadata(o, "", -1)
                         for p, o in offsets.items()})
    finally:
        consumer.close()


def test_the_migration_waits_out_kafkas_throttle_and_creates_the_approved_placement(
        gw, kafka_cluster, kafka_gateway, tmp_path):
    create_placed(kafka_gateway, {TOPIC: PLACEMENT})
    store = open_store(f"sqlite:///{tmp_path}/plans.db")
    snap = gw.assignment()
    draft = plan_preview.from_shrink(snap, TOPIC, 3, delay_ms=0)
    wanted = draft.content["migration"]["assignment"]
    plan = plans.propose(store, OPERATOR, cluster="kafka", kind="shrink",
                         content=draft.content, preview=draft.preview, snapshot=snap,
                         now=datetime.now(UTC))
    plans.approve(store, APPROVER, plan.id, sha256=plan.sha256,
                  topics_of=lambda _c, names: gw.topics_assignment(names))
    with pytest.raises(Conflict) as refused:
        plans.execute(store, OPERATOR, plan.id, gateway=gw,
                      topics_of=lambda _c, names: gw.topics_assignment(names))
    assert str(refused.value) == (f"cluster 'kafka' cannot delete partitions (Apache Kafka "
                                  f"has no DeletePartitions API): run the migration to "
                                  f"'{NEW}' instead")
    assert plans.get(store, plan.id).state == "approved"

    # the quota on the gateway's client id, and its bucket overdrawn by that client
    kafka_gateway.alter_client_quota(None, CLIENT, RATE)
    poll("the quota to be listed", gw.describe_client_quotas,
         lambda qs: any(q["client_id"] == CLIENT for q in qs), 20)
    time.sleep(0.5)  # the active controller applies it from the same metadata record
    [drained] = gw.create_topics([{"name": DRAINER, "partitions": DRAIN, "rf": 1}])
    assert (drained["error"], drained["throttle_time_ms"]) == (None, 0), drained
    overdrawn, overdrawn_at = time.monotonic(), time.time()

    plans.execute(store, OPERATOR, plan.id, gateway=gw, migration=True,
                  topics_of=lambda _c, names: gw.topics_assignment(names))
    thread = execution.executor_thread(store, ["kafka"], lambda _c: gw,
                                      lambda _c: gw.assignment(), holder="kafka-migration")

    def audit(action: str) -> list:
        return [e for e in plans.audit_entries(store, plan=plan.id) if e.action == action]

    while not audit("migration_topic_created") and time.monotonic() < overdrawn + 30:
        thread.cycle(time.time())
        time.sleep(0.2)
    trail = [(e.at.isoformat(), e.action, e.detail) for e in plans.audit_entries(
        store, plan=plan.id)]
    assert audit("execution_retry") and len(audit("migration_topic_created")) == 1, trail
    [first, *_] = audit("execution_retry")
    [made] = audit("migration_topic_created")
    retry, created = first.detail, made.detail
    # Kafka's throttle (KIP-599): the 16 - 11 = 5 tokens owed, less what came back at 1
    # token/s before the request (sent within a tick of the entry's time), over the rate
    assert retry["error"].startswith("THROTTLING_QUOTA_EXCEEDED: throttled for ")
    owed = (DRAIN - 11) - RATE * (first.at.timestamp() - overdrawn_at)
    assert abs(retry["retry_in"] - owed / RATE) <= 1.0, (retry, owed)
    # created only once that time had passed
    assert (made.at - first.at).total_seconds() >= retry["retry_in"]
    # the forecast names the entity Kafka charged: the gateway's own client id
    assert created["quota"] == {
        "quota": f"/config/clients/{CLIENT}", "rate": RATE, "burst": 11.0, "cost": 3,
        "tokens_after": 8.0, "throttle_ms": 0,
        "charged_to": {"user": "ANONYMOUS", "client_id": CLIENT}}
    assert created["placement_as_planned"] is True and created["partitions"] == 3

    got = wait_until(lambda: gw.describe_topics([NEW], missing_ok=True), 20, "the new topic")
    placed = {str(p["partition"]): p["replicas"] for p in got[0]["partitions"]}
    assert placed == wanted
    racks = {b["id"]: b["rack"] for b in gw.describe_cluster()["brokers"]}
    assert all(len({racks[b] for b in reps}) == len(reps) for reps in placed.values())

    # no Prometheus here: what producers write cannot be read, so step 2 is not confirmed;
    # the consumer groups are Kafka's own (ListGroups, OffsetFetch, ListOffsets)
    source = ClusterSource("kafka", None, Limits(), gateway=gw)

    def check(step: int) -> dict:
        return shrink_execution.check_step(
            store, OPERATOR, plan.id, step, source_of=lambda _c: source,
            topics_of=lambda _c, names: gw.topics_assignment(names))

    assert check(1)["checked"]["cluster"].startswith("not confirmed: no Prometheus")
    # a group that read part of the old topic: 3 records on each of 6 partitions, offsets
    # committed at 1 on partitions 0 and 1 only (the rest count from the log start)
    bootstrap = kafka_cluster.bootstrap_servers
    prod = producer(bootstrap)
    for p in range(len(PLACEMENT)):
        for i in range(3):
            prod.send(TOPIC, value=b"r%d" % i, partition=p)
    prod.flush(30)
    prod.close(10)
    commit(bootstrap, {0: 1, 1: 1})
    behind = 2 + 2 + 4 * 3
    assert kafka_group_lag(bootstrap[0], GROUP, TOPIC) == 2 + 2  # the tool shows "-" for
    # partitions without an offset; Railyard counts what the group has not read there
    with pytest.raises(Conflict) as refused:
        check(2)
    assert str(refused.value) == (
        f"step 3: consumer groups have not read '{TOPIC}' to the end: '{GROUP}' {behind} "
        f"records behind (committed offsets against the log end): let them finish, then "
        f"start them on '{NEW}' and check this step off")
    commit(bootstrap, dict.fromkeys(range(len(PLACEMENT)), 3))  # read to the end
    assert kafka_group_lag(bootstrap[0], GROUP, TOPIC) == 0
    assert check(2)["checked"]["cluster"] == (
        f"confirmed: every consumer group with offsets on '{TOPIC}' is at its end ({GROUP})")
    # the old topic deleted: Apache Kafka still has it, so the last step is refused
    with pytest.raises(Conflict, match=f"topic '{TOPIC}' is still on cluster"):
        check(3)
    delete_topics(kafka_gateway, [TOPIC])  # as the operator does, then checks it off
    # once the broker the check asks no longer lists it (brokers learn it one by one)
    wait_until(lambda: not gw.topics_assignment([TOPIC]).has_topic(TOPIC), 30,
               "the old topic gone from the metadata the check reads")
    check(3)
    thread.cycle(time.time())
    assert plans.get(store, plan.id).state == "completed"
    thread.stop()
    store.close()
