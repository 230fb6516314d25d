"""The plan flow on Apache Kafka through /api/v1, with a producer writing.

`railyard serve` (an operator and an approver; the cluster's gateway `{type: kafka}` on the
session's three brokers, its Prometheus a real one scraping the brokers' JMX exporters
through Railyard's rules) proposes a drain of broker 3, the approver approves it, the
operator executes it with a throttle. The drain is Railyard's planner's, on this module's
own topics only: the cluster is shared, and other tests' topics stay where they are.

Then faults: `railyard serve` SIGKILLed mid-execution and started again; a broker
stopped mid-reassignment and started again; a cancel mid-move. And the throttles Kafka's
own tool leaves behind, cleared by an admin's plan."""

from __future__ import annotations

import json
import signal
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pytest
from werkzeug.security import generate_password_hash

from backend.errors import Unavailable
from backend.gateways.kafka import KafkaGateway, topics_snapshot
from backend.localkafka.workload import SteadyProducer
from backend.metrics.client import MetricsClient
from backend.metrics.server import PrometheusProcess, scrape_config
from backend.services import reassign
from tests.e2e.conftest import Dashboard, start_dashboard
from tests.integration.kafka_prometheus import SCRAPE_SECONDS
from tests.kafka_moves import (
    FOLLOWER_RATE,
    FOLLOWER_REPLICAS,
    LEADER_RATE,
    LEADER_REPLICAS,
    create_placed,
    delete_topics,
    fill,
    in_flight,
    log_sizes,
    replicas,
    served,
    throttle_state,
    wait_until,
)
from tests.kafka_tools import kafka_configs, kafka_reassign
from tests.plan_helpers import api_call
from tests.servers import stop

pytestmark = pytest.mark.integration

MB = 1024 * 1024
USERS = {"olga": ("operator", "o-pass-1"), "arne": ("approver", "a-pass-1"),
         "ada": ("admin", "d-pass-1")}
BROKERS = (1, 2, 3)
DRAINED = 3
# partition -> replicas, leader first: broker 3 holds one replica of each. Draining it
# copies p0 and p1 into broker 2, p2 and p3 into broker 1, from leaders 3, 1, 3, 2.
PLACEMENT = [[3, 1], [1, 3], [3, 2], [2, 3]]
SIZES = [1 * MB, 3 * MB, 1 * MB, 3 * MB]  # the small ones finish first: progress rises
# an operator's own throttle, on a broker the drain needs: overwritten while it moves and
# back, exactly, afterwards
OPERATORS_OWN = {("broker", "1"): {FOLLOWER_RATE: "90000000"}}


@dataclass
class Stack:
    """The servers of this module and how to reach them."""

    tmp: Path
    config: dict
    gw: KafkaGateway
    metrics: MetricsClient
    bootstrap: list[str]
    dashboard: Dashboard

    @property
    def api(self) -> str:
        return self.dashboard.url + "/api/v1"

    def restart(self) -> None:
        """`railyard serve` again on the same store (after the old one was killed)."""
        self.dashboard = start_dashboard(self.tmp, self.config)

    def call(self, user: str, method: str, path: str, body: dict | None = None) -> dict:
        return api_call(self.api, user, USERS[user][1], method, path, body)

    def plan(self, plan_id: int) -> dict:
        return self.call("olga", "GET", f"/plans/{plan_id}")

    def audit(self, plan_id: int) -> list[dict]:
        return self.call("arne", "GET", f"/audit?plan={plan_id}")["entries"]


@pytest.fixture(scope="module")
def stack(kafka_cluster, kafka_gateway, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("kafka-flow")
    prom = PrometheusProcess(tmp / "prom")
    prom.write_config(scrape_config({b.id: b.exporter_url.split("/")[2]
                                     for b in kafka_cluster.brokers}, "kafka", SCRAPE_SECONDS),
                      "strimzi", rules_interval=SCRAPE_SECONDS)
    prom.start()
    config = {
        "clusters": [{"name": "kafka",
                      "gateway": {"type": "kafka",
                                  "bootstrap_servers": kafka_cluster.bootstrap_servers},
                      "prometheus": {"url": prom.url, "dialect": "strimzi"},
                      # these tests stop a broker under a move to see the executor's own
                      # retry budget and restore; a guard-rail stop would pause the plan
                      # first (docs/executor.md; tests/unit/test_executor_guards.py)
                      "guards": {"enabled": False}}],
        "auth": {"secret_key_file": str(tmp / "secret_key"), "users": [
            {"name": n, "role": r, "password_hash": generate_password_hash(p)}
            for n, (r, p) in USERS.items()]}}
    s = None
    try:
        s = Stack(tmp, config, kafka_gateway, MetricsClient(prom.url, "strimzi", ttl=0),
                  kafka_cluster.bootstrap_servers, start_dashboard(tmp, config))
        yield s
    finally:
        if s is not None:
            stop(s.dashboard.proc)
        prom.stop()


@pytest.fixture
def topic(stack, request):
    """This test's own topic, placed and filled (SIZES, or the sizes the test gives as its
    parameter); afterwards no move of it is in flight, no throttle is left on the
    brokers, and the topic is gone."""
    gw = stack.gw
    name = "ex-flow-" + request.node.originalname.removeprefix("test_")[:30].replace("_", "-")
    delete_topics(gw, [name])
    assert throttle_state(gw, BROKERS, []) == {}, "throttles left on the shared cluster"
    create_placed(gw, {name: PLACEMENT})
    fill(stack.bootstrap, [name], getattr(request, "param", SIZES))
    try:
        yield name
    finally:
        if in_flight(gw, [name]):
            gw.cancel_reassignments(list(in_flight(gw, [name])))
        for (etype, n), cfg in settled_throttles(gw, []).items():
            gw.alter_configs(etype, n, delete=list(cfg))
        delete_topics(gw, [name])


def settled_throttles(gw: KafkaGateway, topics: list[str]) -> dict:
    """throttle_state, once every broker answers: the first call after a broker came back
    can fail while the admin client's metadata does not list it yet."""
    def read():
        try:
            return throttle_state(gw, BROKERS, topics), True
        except Unavailable:
            return None
    return wait_until(read, 30, "every broker to answer DescribeConfigs")[0]


def set_operators_own(gw: KafkaGateway) -> None:
    for (etype, name), cfg in OPERATORS_OWN.items():
        gw.alter_configs(etype, name, set_=cfg)


def drain_plan(gw: KafkaGateway, topic: str) -> dict:
    """Railyard's planner draining broker 3, on a snapshot holding only ``topic``."""
    snap = topics_snapshot("kafka", gw.describe_topics([topic]),
                           gw.describe_cluster()["brokers"])
    out = reassign.generate(snap, reassign.goal("drain", (DRAINED,)), snap.limits)
    assert out["ok"], out["summary"]
    return out["plan"]


def propose_and_approve(stack: Stack, topic: str, throttle: int) -> tuple[int, dict]:
    """The operator proposes the drain, the approver approves what they were shown."""
    proposed = stack.call("olga", "POST", "/plans", {
        "cluster": "kafka", "kind": "reassignment", "throttle": throttle,
        "title": f"drain broker {DRAINED} ({topic})", "plan": drain_plan(stack.gw, topic)})
    plan = stack.call("arne", "GET", f"/plans/{proposed['id']}")
    moves = plan["content"]["partitions"]
    assert {m["topic"] for m in moves} == {topic}  # nobody else's topic
    assert len(moves) == len(PLACEMENT) and all(DRAINED not in m["replicas"] for m in moves)
    assert stack.call("arne", "POST", f"/plans/{plan['id']}/approve",
                      {"sha256": plan["sha256"], "comment": "drain"})["state"] == "approved"
    return plan["id"], plan


def by_broker_range(metrics: MetricsClient, concept: str, start: float,
                    end: float) -> dict[int, list[tuple[float, float]]]:
    """Every (time, value) Prometheus holds of ``concept`` per broker between start and
    end, one per scrape."""
    frame = metrics.range(concept, start, end, step=f"{SCRAPE_SECONDS:g}s")
    out: dict[int, list[tuple[float, float]]] = {}
    for b, t, v in zip(frame["broker"], frame["timestamp"], frame["value"], strict=True):
        out.setdefault(int(b), []).append((t.timestamp(), float(v)))
    return out


def least_move_seconds(moved: float, quota: float, response: float) -> float:
    """The shortest time KIP-73's throttle lets ``moved`` bytes into one broker take.

    Kafka admits a throttled fetch while its measured rate, the bytes of its retained
    samples over the time since the oldest (SimpleRate.windowSize), is under the quota,
    and lets the admitted response through whole. A sensor whose samples span the whole
    window when the move starts (one read by the JMX exporter restarts its samples every
    11 s, docs/throttle.md) lends up to the quota x LEND_SECONDS at once; after that the
    copy goes at the quota, plus the response that crosses it."""
    return (moved - response) / quota - LEND_SECONDS


# ---- the flow ---------------------------------------------------------------------------------
THROTTLE = 500_000  # bytes/s per broker and side (KIP-73)
# KIP-73's window: replication.quota.window.num (11) x replication.quota.window.size.seconds
# (1), and the sample in progress: what a warm sensor may lend a move at its start
LEND_SECONDS = 11 * 1 + 1
# each destination takes more than the lend and a response, so the 1 MiB partitions are done
# while the 9 MiB ones still move, however much the brokers' sensors lend: 10 MiB into
# brokers 1 and 2, ~21 s from a cold sensor, ~6 s or more after the largest lend
DRAIN_SIZES = [1 * MB, 9 * MB, 1 * MB, 9 * MB]
WRITE_RATE = 20_000  # bytes/s the producer keeps writing, far under the throttle
# the largest response a throttled fetch can bring (replica.fetch.max.bytes, 1 MiB by
# default, per partition): two moving partitions per broker and side here
RESPONSE = 2 * MB


def _steps(progress: list[tuple]) -> list[tuple]:
    """The (partitions, bytes, seconds) polled where partitions or bytes changed, and the
    last: what a failure's message shows."""
    return [p for i, p in enumerate(progress)
            if i == 0 or i == len(progress) - 1 or p[:2] != progress[i - 1][:2]]


@pytest.mark.parametrize("topic", [DRAIN_SIZES], indirect=True, ids=["past-the-lend"])
def test_drain_through_the_api_on_apache_kafka(stack, topic):
    gw = stack.gw
    set_operators_own(gw)
    before = throttle_state(gw, BROKERS, [topic])
    assert before == OPERATORS_OWN
    with SteadyProducer(stack.bootstrap, {topic: len(PLACEMENT)}, WRITE_RATE) as writer:
        plan_id, plan = propose_and_approve(stack, topic, THROTTLE)
        assert stack.call("olga", "POST", f"/plans/{plan_id}/execute")["state"] == "executing"

        progress, seen_configs, moving_from, moving_to = [], None, None, None
        last_flying, copy_rates = None, []
        began = time.monotonic()
        while time.monotonic() < began + 120:
            ex = stack.plan(plan_id)["execution"]
            flying = in_flight(gw, [topic])
            if flying:
                last_flying = time.time()
            if flying and moving_from is None:
                moving_from = time.time()
            if flying and seen_configs is None:
                seen_configs = throttle_state(gw, BROKERS, [topic])
            if not flying and moving_from is not None and moving_to is None:
                moving_to = time.time()
            if ex is not None:  # with the seconds since execute, for a failure's message
                progress.append((ex["partitions_done"], ex["bytes_done"],
                                 round(time.monotonic() - began, 1)))
                copy_rates.append(ex.get("copy_rate"))
                if ex["state"] in ("completed", "failed", "cancelled"):
                    break
            time.sleep(0.5)
    assert ex["state"] == "completed", ex
    assert stack.plan(plan_id)["state"] == "completed"

    # while it moved: the throttle on every broker the drain needs, the operator's own
    # overwritten (KIP-73: both rates on every source and destination broker), and the
    # topic's throttled replicas. Checked before the progress: a move that ran unthrottled,
    # or too fast to be seen in flight, fails here and says what was set.
    rate = str(THROTTLE)
    assert seen_configs is not None and moving_from is not None, progress
    assert {k: v for k, v in seen_configs.items() if k[0] == "broker"} == {
        ("broker", str(b)): {LEADER_RATE: rate, FOLLOWER_RATE: rate} for b in BROKERS}
    assert set(seen_configs[("topic", topic)]) == {LEADER_REPLICAS, FOLLOWER_REPLICAS}, (
        seen_configs)

    # progress rose: never back, through at least one step between none and all
    parts = [p for p, _, _ in progress]
    # a failure says where the figures moved, how long moves were seen in flight, and what
    # the executor did (pytest cuts a list given as the message short; a string it prints)
    moved_for = moving_to and round(moving_to - moving_from, 1)
    steps = (f"progress {_steps(progress)}; in flight for {moved_for} s; audit "
             f"{[(e['action'], e['at'][11:22]) for e in stack.audit(plan_id)]}")
    assert parts == sorted(parts) and parts[-1] == len(PLACEMENT), steps
    assert any(0 < p < len(PLACEMENT) for p in parts), steps
    assert [b for _, b, _ in progress] == sorted(b for _, b, _ in progress), steps
    # the total is the proposal's estimate; each batch counts the sizes when it starts,
    # after the producer wrote some more
    assert ex["bytes_done"] >= ex["bytes_total"] >= sum(DRAIN_SIZES)
    # while partitions copied, the API said how fast, from Kafka's ReassignmentBytesInPerSec
    # (KIP-542) through Prometheus: before, nothing moved until a partition finished
    seen = [r["bytes_per_second"] for r in copy_rates if r and r.get("bytes_per_second")]
    assert seen and max(seen) <= 2 * THROTTLE * len(BROKERS), (copy_rates, steps)

    # the throttle held the copy back: the move took at least as long as KIP-73's rate lets
    # each destination's bytes in once Kafka's lend is spent. The batch started when its
    # reassignments had been sent (Kafka began them before), and the last look that saw a
    # move in flight was before the end: the time between is less than the move took.
    start = stack.plan(plan_id)["execution"]["per_batch"][0]["started_at"]
    into: dict[int, int] = {}
    for m in plan["content"]["partitions"]:
        for b in set(m["replicas"]) - set(PLACEMENT[m["partition"]]):
            into[b] = into.get(b, 0) + DRAIN_SIZES[m["partition"]]
    least = max(least_move_seconds(n, THROTTLE, RESPONSE) for n in into.values())
    assert last_flying - start >= least, (into, last_flying - start, least, progress)

    # Prometheus, through the exporter rules Railyard ships: the throttled byte-rates
    # (LeaderReplication, FollowerReplication) while data moved. Kafka's own reading may
    # stand over the throttle for some seconds (its window shrinks when old samples expire:
    # docs/throttle.md), so the bound is the one above, on the bytes and the time.
    end = (moving_to or time.time()) + SCRAPE_SECONDS
    wait_until(lambda: time.time() > end + 2 * SCRAPE_SECONDS, 10,
               "Prometheus to have scraped past the move")
    peaks, late = {}, {}
    for concept in ("leader_throttled_rate", "follower_throttled_rate"):
        samples = by_broker_range(stack.metrics, concept, start, end)
        peaks[concept] = {b: round(max(v for _, v in vs)) for b, vs in samples.items()}
        late[concept] = {b: round(max([v for t, v in vs if t >= vs[0][0] + 3] or [0]))
                         for b, vs in samples.items()}
    # the throttle was what held the copy back: the destinations fetched at about it
    assert max(peaks["follower_throttled_rate"].values()) >= 0.5 * THROTTLE, peaks
    print(f"\nthrottle {THROTTLE} B/s; peak byte-rates {peaks}; peaks from 3 s on {late}; "
          f"moved in {(moving_to or end) - moving_from:.1f} s; producer wrote {writer.sent} B; "
          f"progress (partitions, bytes, seconds) {progress}")

    # afterwards: the new replicas hold the data, broker 3 none of it, and the only
    # throttle left is the operator's own, exactly as it was
    served(lambda: [sorted(r) for r in replicas(gw, [topic])[topic]],
           [sorted(m["replicas"]) for m in plan["content"]["partitions"]], "the replicas")
    now = replicas(gw, [topic])[topic]
    sizes = log_sizes(gw, [topic])
    for p, reps in enumerate(now):
        assert {b for t, q, b in sizes if q == p} == set(reps)
        assert {sizes[(topic, p, b)] for b in reps} == {sizes[(topic, p, reps[0])]}
        assert sizes[(topic, p, reps[0])] >= DRAIN_SIZES[p]
    assert throttle_state(gw, BROKERS, [topic]) == before
    actions = [e["action"] for e in stack.audit(plan_id)]
    assert actions[:3] == ["propose", "approve", "execute"] and actions[-1] == "complete"
    assert {"config_set", "batch_started", "config_restored", "batch_finished"} <= set(actions)
    assert "execution_retry" not in actions, stack.audit(plan_id)



# ---- faults ------------------------------------------------------------------------------------
def execute_and_wait_in_flight(stack: Stack, topic: str, throttle: int) -> tuple[int, dict]:
    """Propose, approve and execute the drain; return once Kafka lists its large moves
    (a 1 MiB partition can be done with its first fetch) and the executor has marked the
    batch running."""
    plan_id, plan = propose_and_approve(stack, topic, throttle)
    assert stack.call("olga", "POST", f"/plans/{plan_id}/execute")["state"] == "executing"
    large = {(topic, p) for p, size in enumerate(SIZES) if size > MB}
    wait_until(lambda: large <= set(in_flight(stack.gw, [topic])), 60,
               "the drain's large moves to be in flight")
    wait_until(lambda: stack.plan(plan_id)["execution"]["per_batch"][0]["state"] == "running",
               30, "the batch to be marked running")
    return plan_id, plan


def wait_ended(stack: Stack, plan_id: int, timeout: float) -> dict:
    """The execution once it has ended (the API answering all along)."""
    def ended():
        ex = stack.plan(plan_id)["execution"]
        return ex if ex is not None and ex["state"] in ("completed", "failed",
                                                        "cancelled") else None
    return wait_until(ended, timeout, f"plan {plan_id} to end", every=0.5)


def assert_cancelled_moves_went_back(stack: Stack, topic: str, plan_id: int,
                                     plan: dict) -> None:
    """A cancel (KIP-455) puts back only the moves in flight: those it cancelled are on
    their old replicas, and a move that finished before it (a 1 MiB partition can, with
    its first fetch) stays done. The 3 MiB moves were in flight
    (execute_and_wait_in_flight waited for them), so they were cancelled."""
    [cancelled] = [e["detail"]["partitions"] for e in stack.audit(plan_id)
                   if e["action"] == "reassignments_cancelled"]
    assert {f"{topic}-1", f"{topic}-3"} <= set(cancelled)
    targets = [m["replicas"] for m in plan["content"]["partitions"]]
    now = replicas(stack.gw, [topic])[topic]
    for p, reps in enumerate(now):
        back = f"{topic}-{p}" in cancelled
        assert sorted(reps) == sorted(PLACEMENT[p] if back else targets[p]), (p, reps, cancelled)


def restart_broker(kafka_cluster, gw: KafkaGateway, broker: int) -> None:
    """Start a stopped broker again and wait until the cluster lists it alive (the
    cluster is shared) and ``gw`` reaches it. start_broker also waits for every exporter
    to answer within 2 s, which a loaded machine can miss; what matters here is the
    broker. The gateway's first request after a broker came back can fail
    (UnknownBrokerIdError: its admin client's metadata does not list it yet)."""
    try:
        kafka_cluster.start_broker(broker)
    except Unavailable as e:
        print(f"start_broker({broker}): {e}")
    wait_until(lambda: broker in kafka_cluster.live_brokers(), 180,
               f"broker {broker} to be alive again", every=1)

    def reached() -> bool:
        try:
            gw.list_reassignments()
            gw.describe_configs("broker", str(broker))
        except Unavailable:
            return False
        return True
    wait_until(reached, 30, f"the gateway to reach broker {broker}")


def test_broker_stopped_mid_reassignment_and_started_again(stack, topic, kafka_cluster):
    """Broker 2, a destination of the drain, stops mid-move. Kafka's own tool cannot even
    set a throttle then (KAFKA-13392: a broker's configs are altered through that broker).
    Railyard says at once what it waits for, gives up after its retry budget (cancelling
    the moves, putting back every throttle it can), and puts back broker 2's once it is
    back; the API answers all along."""
    gw = stack.gw
    set_operators_own(gw)
    before = throttle_state(gw, BROKERS, [topic])
    plan_id, plan = execute_and_wait_in_flight(stack, topic, 250_000)
    said = []

    def execution() -> dict:
        t = time.monotonic()
        ex = stack.plan(plan_id)["execution"]
        assert time.monotonic() - t < 15, "the API hung while broker 2 was down"
        said.append((round(time.monotonic() - stopped, 1), ex["state"], ex["error"],
                     ex["cause"]))
        return ex

    try:
        kafka_cluster.stop_broker(2)
        stopped = time.monotonic()
        ex = wait_until(lambda: (e := execution())["error"] and "broker 2" in e["error"] and e,
                        30, "Railyard to say it waits for broker 2", every=1)
        assert ex["state"] == "running"
        assert ex["error"].startswith("BROKER_NOT_AVAILABLE: broker 2 is down while "
                                      f"{topic}-"), ex
        # past the retry budget it gives up while broker 2 is still down: the moves are
        # cancelled and every throttle but broker 2's is back already
        ex = wait_until(lambda: (e := execution())["cause"] and e, 90,
                        "Railyard to give up on the moves", every=1)
        assert ex["cause"].startswith("gave up after 5 attempts: BROKER_NOT_AVAILABLE: "
                                      "broker 2 is down"), ex
        wait_until(lambda: not in_flight(gw, [topic]), 30, "the moves to be cancelled")
        wait_until(lambda: throttle_state(gw, (1, 3), [topic]) == before, 30,
                   "the throttles of brokers 1 and 3 and the topic to be put back")
        # broker 2's throttle is still booked, and Railyard says what it waits for
        ex = wait_until(lambda: (e := execution())["error"] and "put back" in e["error"] and e,
                        30, "Railyard to say it waits for broker 2 to put its throttle back",
                        every=1)
        assert ex["state"] == "failing"
        assert ex["error"].startswith("BROKER_NOT_AVAILABLE: broker 2 is down: its throttle "
                                      "configs are put back once it is up again ("), ex
        # Kafka's own kafka-configs cannot set a throttle on broker 2 either: the request
        # must go to that broker (KAFKA-13392), so it times out
        short = stack.tmp / "short-timeouts.properties"
        short.write_text("default.api.timeout.ms=5000\nrequest.timeout.ms=3000\n")
        tool = kafka_configs(stack.bootstrap[0], [
            "--command-config", str(short), "--alter", "--entity-type", "brokers",
            "--entity-name", "2", "--add-config", f"{LEADER_RATE}=1"], check=False)
        assert tool.returncode != 0, tool.stdout
        assert "Timeout" in tool.stdout + tool.stderr, (tool.stdout, tool.stderr[-2000:])
    finally:
        restart_broker(kafka_cluster, gw, 2)
    ex = wait_ended(stack, plan_id, 180)
    assert ex["state"] == "failed", said
    assert settled_throttles(gw, [topic]) == before
    assert not in_flight(gw, [topic])
    assert_cancelled_moves_went_back(stack, topic, plan_id, plan)
    audit = stack.audit(plan_id)
    actions = [e["action"] for e in audit]
    assert actions.count("reassignments_cancelled") == 1 and actions[-1] == "fail"
    restored = [e["detail"]["name"] for e in audit if e["action"] == "config_restored"
                and e["detail"]["entity_type"] == "broker"]
    assert restored[-1] == "2" and sorted(restored) == ["1", "2", "3"]
    firsts = {}
    for t, state, error, _cause in said:
        firsts.setdefault((state, error), t)
    print(f"\nbroker 2 down: what Railyard said (seconds after the stop) {firsts}")


def test_serve_killed_mid_execution_resumes_after_a_restart(stack, topic):
    """SIGKILL `railyard serve` while its executor has a batch in flight: the throttles stay
    on (nothing could put them back), Kafka goes on copying; a new `railyard serve` on the
    same store takes the cluster's lease over once it expires (30 s), follows the batch
    still in flight without sending it again, completes the plan and puts every throttle
    back."""
    gw = stack.gw
    set_operators_own(gw)
    before = throttle_state(gw, BROKERS, [topic])
    # 4 MiB into brokers 1 and 2 at 100 kB/s: ~40 s, less Kafka's first burst (up to the
    # rate x 11 s, docs/throttle.md): still moving after a restart on a busy machine
    throttle = 100_000
    plan_id, plan = execute_and_wait_in_flight(stack, topic, throttle)
    stack.dashboard.proc.send_signal(signal.SIGKILL)
    stack.dashboard.proc.wait(30)
    held = throttle_state(gw, BROKERS, [topic])
    assert held[("broker", "1")] == {LEADER_RATE: str(throttle), FOLLOWER_RATE: str(throttle)}
    stack.restart()
    restarted = time.time()
    still_moving = bool(in_flight(gw, [topic]))
    ex = wait_ended(stack, plan_id, 180)
    assert ex["state"] == "completed", ex
    audit = stack.audit(plan_id)
    actions = [e["action"] for e in audit]
    # started once, the batch's moves sent once: nothing moved twice
    assert actions.count("execution_started") == 1
    [started] = [e["detail"] for e in audit if e["action"] == "batch_started"]
    assert started["started"] == started["partitions"] == len(PLACEMENT)
    [finished] = [e for e in audit if e["action"] == "batch_finished"]
    assert still_moving and finished["detail"]["partitions"] == len(PLACEMENT)
    assert datetime.fromisoformat(finished["at"]).timestamp() > restarted
    assert settled_throttles(gw, [topic]) == before
    served(lambda: [sorted(r) for r in replicas(gw, [topic])[topic]],
           [sorted(m["replicas"]) for m in plan["content"]["partitions"]], "the replicas")


def test_cancel_mid_move_leaves_no_reassignment_and_puts_throttles_back(stack, topic):
    """Cancel while the drain moves: the moves in flight are cancelled (they go back to
    their replicas; a move that already finished stays done), Kafka's own tool lists no
    reassignment, and every throttle is as it was."""
    gw = stack.gw
    set_operators_own(gw)
    before = throttle_state(gw, BROKERS, [topic])
    plan_id, plan = execute_and_wait_in_flight(stack, topic, 250_000)
    assert stack.call("olga", "POST", f"/plans/{plan_id}/cancel")["state"] == "executing"
    ex = wait_ended(stack, plan_id, 60)
    assert ex["state"] == "cancelled", ex
    assert stack.plan(plan_id)["state"] == "cancelled"
    listed = kafka_reassign(stack.bootstrap[0], ["--list"]).stdout
    assert topic not in listed, listed
    assert not in_flight(gw, [topic])
    assert settled_throttles(gw, [topic]) == before
    assert stack.audit(plan_id)[-1]["action"] == "cancel"
    assert_cancelled_moves_went_back(stack, topic, plan_id, plan)


TOOL_THROTTLE = 50_000_000  # bytes/s: the tool's move of 8 MB is over in about a second


def test_a_clear_plan_deletes_exactly_what_kafkas_tool_left(stack, topic, tmp_path):
    """kafka-reassign-partitions --execute --throttle leaves its throttle configs after the
    move until someone runs --verify. Railyard finds exactly those, value for value; an
    admin proposes clearing them, an approver approves, an operator executes, and the
    executor deletes them on Apache Kafka, one audit entry per entity."""
    gw = stack.gw
    plan_file = tmp_path / "drain.json"
    plan_file.write_text(json.dumps(drain_plan(gw, topic)))
    kafka_reassign(stack.bootstrap[0], ["--reassignment-json-file", str(plan_file),
                                        "--execute", "--throttle", str(TOOL_THROTTLE)])
    wait_until(lambda: not in_flight(gw, [topic]), 60, "the tool's move to finish")
    left = throttle_state(gw, BROKERS, [topic])
    rate = str(TOOL_THROTTLE)
    assert {k: v for k, v in left.items() if k[0] == "broker"} == {
        ("broker", str(b)): {LEADER_RATE: rate, FOLLOWER_RATE: rate} for b in BROKERS}
    assert set(left[("topic", topic)]) == {LEADER_REPLICAS, FOLLOWER_REPLICAS}

    proposed = stack.call("ada", "POST", "/plans", {
        "cluster": "kafka", "kind": "clear_throttles", "title": "the tool's leftovers"})
    plan = stack.call("arne", "GET", f"/plans/{proposed['id']}")
    named: dict[tuple[str, str], dict[str, str]] = {}
    for c in plan["content"]["configs"]:
        named.setdefault((c["entity_type"], c["name"]), {})[c["key"]] = c["value"]
    assert named == left
    assert stack.call("arne", "POST", f"/plans/{plan['id']}/approve",
                      {"sha256": plan["sha256"], "comment": "tool leftovers"})["state"] \
        == "approved"
    assert stack.call("olga", "POST", f"/plans/{plan['id']}/execute")["state"] == "executing"
    wait_until(lambda: stack.plan(plan["id"])["state"] in ("completed", "failed"), 60,
               "the clear plan to end")
    assert stack.plan(plan["id"])["state"] == "completed", stack.plan(plan["id"])
    assert settled_throttles(gw, [topic]) == {}
    cleared = {(e["detail"]["entity_type"], e["detail"]["name"]): sorted(e["detail"]["deleted"])
               for e in stack.audit(plan["id"]) if e["action"] == "config_cleared"}
    assert cleared == {entity: sorted(cfg) for entity, cfg in left.items()}
