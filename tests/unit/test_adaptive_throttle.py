"""The adaptive throttle (issue 28): kafka-kit autothrottle's decision against recorded
traffic (never above the ceiling, never below the floor, no change under 10%), and the
executor on the twin lowering a plan's rates under a traffic burst and raising them after,
holding them while Prometheus is silent and then dropping to the floor, and a switch back
to fixed."""

from __future__ import annotations

import numpy as np
import pytest

from backend.engines.throttle import FOLLOWER_RATE, LEADER_RATE, adaptive_rates
from backend.executor.adaptive import ControlSettings, ThrottleControl
from backend.executor.freeze import freeze, spec_from_dict
from backend.twin.generate import generate_snapshot
from tests.executor_rig import Rig, TwinTraffic, _scaled, drain_plan

MB = 1_000_000
CAP = 125 * MB

# recorded traffic of one broker (all of it, replication at the rate set included, as a
# NIC counts it), bytes/s out and in, one sample a look: quiet, a burst that eats the
# headroom, back to quiet, and a wobble within 10%
RECORDED_TX = np.array([20, 22, 100, 190, 200, 160, 90, 40, 21, 20, 23, 19]) * MB
RECORDED_RX = np.array([15, 15, 95, 180, 195, 150, 85, 30, 16, 15, 17, 14]) * MB


def replay(tx, rx, ceiling, floor):
    """The rates set look after look, each look's previous rates the last ones set."""
    leader = follower = np.array([np.nan])
    out = []
    for t, r in zip(tx, rx, strict=True):
        leader, follower = adaptive_rates(np.array([float(t)]), np.array([float(r)]),
                                          leader, follower, CAP, ceiling, floor)
        out.append((float(leader[0]), float(follower[0])))
    return np.array(out)


@pytest.mark.parametrize("ceiling,floor", [(100 * MB, 5 * MB), (50 * MB, 20 * MB),
                                           (30 * MB, 30 * MB)])
def test_recorded_traffic_never_above_the_ceiling_nor_below_the_floor(ceiling, floor):
    rates = replay(RECORDED_TX, RECORDED_RX, ceiling, floor)
    assert rates.max() <= ceiling and rates.min() >= floor


def test_a_burst_lowers_the_rates_and_quiet_raises_them_again():
    rates = replay(RECORDED_TX, RECORDED_RX, 80 * MB, 5 * MB)
    assert rates[0, 0] == 80 * MB  # quiet: the headroom (94.5 MB/s) is above the ceiling
    assert rates[4, 0] == 5 * MB and rates[4, 1] == 5 * MB  # the burst's peak: the floor
    assert 5 * MB < rates[6, 0] < 80 * MB  # easing off
    assert rates[-1, 0] == 80 * MB  # quiet again: back at the ceiling


def test_no_change_under_the_ten_percent_threshold():
    prev = np.array([50.0 * MB])
    # a headroom of 54 MB/s (8% above) keeps 50; 56 MB/s (12% above) is taken
    for util, expect in ((CAP - 54 * MB / 0.9, 50 * MB), (CAP - 56 * MB / 0.9, 56 * MB)):
        leader, follower = adaptive_rates(np.array([util + prev[0]]), np.array([util + prev[0]]),
                                          prev, prev, CAP, 100 * MB, 1 * MB)
        assert leader[0] == pytest.approx(expect, abs=1) and follower[0] == leader[0]
    # random recorded series: every change is more than 10% of the rate before it
    rng = np.random.default_rng(7)
    tx, rx = rng.uniform(0, 140 * MB, 200), rng.uniform(0, 140 * MB, 200)
    rates = replay(tx, rx, 90 * MB, 3 * MB)
    for i in range(1, len(rates)):
        for side in (0, 1):
            before, after = rates[i - 1, side], rates[i, side]
            assert after == before or abs(after - before) > 0.1 * before


def test_the_spec_freezes_the_mode_and_a_fixed_spec_is_as_before():
    snap = generate_snapshot(6, 3, 4, 24, 3, seed=1)
    plan = drain_plan(snap, 1, 4, 2)
    fixed = freeze(snap, plan, 10 * MB)
    assert "throttle_mode" not in fixed.to_dict()
    adaptive = freeze(snap, plan, 10 * MB, throttle_mode={"mode": "adaptive", "floor": MB})
    again = spec_from_dict(adaptive.to_dict(), len(plan["partitions"]))
    assert again.throttle_mode == {"mode": "adaptive", "floor": MB}


# ---- the executor on the twin --------------------------------------------------------------
def adaptive_rig(tmp_path, capacity: float = 60 * MB) -> tuple[Rig, TwinTraffic]:
    snap = _scaled(generate_snapshot(6, 3, 6, 24, 3, seed=3), 0.1)  # 6.5 GB to move
    rig = Rig(snap, tmp_path / "store.db")
    traffic = TwinTraffic(rig.twin)
    rig.executor.control = ThrottleControl(
        rig.records, rig.journal, traffic,
        ControlSettings(interval_seconds=30, hold_seconds=90, network_capacity=capacity))
    return rig, traffic


def rates_of(rig: Rig) -> dict[str, tuple[float, float]]:
    return {name: (float(cfg[LEADER_RATE]), float(cfg[FOLLOWER_RATE]))
            for (etype, name), cfg in rig.throttle_configs().items() if etype == "broker"}


def start_adaptive(rig: Rig, ceiling: float, floor: int) -> dict:
    from backend.executor.freeze import executable_content

    content = executable_content(rig.twin.assignment(), drain_plan(rig.twin.snap, 1, 4, 12),
                                 ceiling, 12, 1250, {"mode": "adaptive", "floor": floor})
    sizes = [len(b) for b in content["execution"]["batches"]]
    rig.records.create(1, rig.twin.snap.cluster, content, "x" * 64, sizes, "op", rig.now)
    return content


def test_a_plan_under_a_traffic_burst_lowers_its_throttle_and_then_raises_it(tmp_path):
    rig, _ = adaptive_rig(tmp_path)
    ceiling, floor = 40 * MB, 2 * MB
    start_adaptive(rig, ceiling, floor)
    for _ in range(70):
        rig.step(1)
    quiet = rates_of(rig)
    assert quiet and all(v <= ceiling for r in quiet.values() for v in r)
    rig.twin.set_traffic(40.0)  # a burst: producers and consumers eat the headroom
    for _ in range(90):
        rig.step(1)
    burst = rates_of(rig)
    assert burst and min(min(r) for r in burst.values()) < min(min(r) for r in quiet.values())
    assert all(floor <= v <= ceiling for r in burst.values() for v in r)
    rig.twin.set_traffic(1.0)
    for _ in range(90):
        rig.step(1)
    after = rates_of(rig)
    assert min(min(r) for r in after.values()) > min(min(r) for r in burst.values())
    adjusted = [d for _, a, d, _ in rig.journal.entries if a == "throttle_adjusted"]
    assert adjusted and all(d["mode"] == "adaptive" for d in adjusted)
    ticks = rig.records.throttle_ticks(1)
    assert len(ticks) >= 6 and all(t["brokers"] for t in ticks)
    assert rig.records.throttle_ticks(1, newest=2) == ticks[-2:]  # oldest first
    ex = rig.run(1)
    assert ex.state == "completed" and rig.throttle_configs() == {}  # all put back


def test_prometheus_silent_holds_the_rates_then_drops_to_the_floor(tmp_path):
    rig, traffic = adaptive_rig(tmp_path)
    start_adaptive(rig, 40 * MB, 3 * MB)
    for _ in range(40):
        rig.step(1)
    held = rates_of(rig)
    traffic.down = True
    for _ in range(60):  # inside the 90 s hold
        rig.step(1)
    assert rates_of(rig) == held
    assert "holding the last rates" in rig.records.throttle_ticks(1)[-1]["note"]
    for _ in range(90):
        rig.step(1)
    assert set(rates_of(rig).values()) == {(3 * MB, 3 * MB)}
    assert "at the floor" in rig.records.throttle_ticks(1)[-1]["note"]


def test_switched_to_fixed_goes_back_to_the_ceiling(tmp_path):
    rig, _ = adaptive_rig(tmp_path, capacity=30 * MB)
    start_adaptive(rig, 40 * MB, 1 * MB)
    for _ in range(40):
        rig.step(1)
    assert any(v < 40 * MB for r in rates_of(rig).values() for v in r)
    rig.records.set_throttle_mode(1, "fixed", None, "olivia", rig.now)
    rig.step(1)
    assert set(rates_of(rig).values()) == {(40 * MB, 40 * MB)}


def test_a_new_batch_on_the_same_brokers_keeps_the_rates_the_controller_chose(tmp_path):
    """A batch ends with its configs removed; the next one on the same brokers starts at
    the rates of the last look, not at the ceiling until the next look is due (30 s: the
    demo drain's batches took less, so under a burst it ran at the ceiling)."""
    snap = _scaled(generate_snapshot(4, 4, 4, 12, 3, seed=3), 0.1)
    rig = Rig(snap, tmp_path / "store.db")
    rig.executor.control = ThrottleControl(rig.records, rig.journal, TwinTraffic(rig.twin),
                                           ControlSettings(network_capacity=30 * MB))
    plan = drain_plan(snap, 1, 4, 4)  # every batch throttles brokers 1 to 4
    rig.start(1, plan, 40 * MB, per_broker=1, throttle_mode={"mode": "adaptive", "floor": MB})
    at_ceiling, batches = [], set()
    for i in range(1000):
        ex = rig.step(1)
        batches.add(ex.batch)
        if any(40 * MB in r for r in rates_of(rig).values()):
            at_ceiling.append(i)
        if ex.state == "completed":
            break
    assert ex.state == "completed" and len(batches) == 4
    # 27 MB/s of headroom on 30 MB/s links: below the ceiling from the first batch's start
    # (the controller looks as a batch starts)
    assert at_ceiling == []
    assert rig.throttle_configs() == {}
    assert rig.executor.control._chosen == {}  # forgotten once the plan ended


# ---- the plan: frozen mode, the switch ---------------------------------------------------------
def test_propose_freezes_the_mode_in_the_sha256_and_refuses_a_floor_above_the_ceiling(tmp_path):
    from backend.errors import BadInput
    from backend.services import plans
    from tests.executor_rig import sqlite_store
    from tests.plan_helpers import OPERATOR as olivia
    from tests.plan_helpers import moves, orders_cluster

    store = sqlite_store(tmp_path / "p.db")
    content = moves(("orders", 0, [3, 4]))
    kw = {"cluster": "c1", "kind": "reassignment", "content": content, "preview": {},
          "snapshot": orders_cluster(), "throttle": 50 * MB}
    fixed = plans.propose(store, olivia, **kw)
    adaptive = plans.propose(store, olivia, throttle_mode={"mode": "adaptive", "floor": MB}, **kw)
    assert fixed.sha256 == plans.plan_sha256("reassignment", "c1", content, 50 * MB)
    assert adaptive.sha256 != fixed.sha256
    assert plans.get(store, adaptive.id).throttle_mode == {"mode": "adaptive", "floor": MB}
    with pytest.raises(BadInput, match=r"throttle_mode\.floor"):
        plans.propose(store, olivia, throttle_mode={"mode": "adaptive", "floor": 60 * MB}, **kw)
    with pytest.raises(BadInput, match="needs a throttle"):
        plans.propose(store, olivia, **{**kw, "throttle": None},
                      throttle_mode={"mode": "adaptive", "floor": MB})


def test_an_approved_adaptive_plan_runs_adaptive_and_the_execute_right_switches_it(tmp_path):
    from datetime import timedelta

    from backend.errors import BadInput, Conflict, Forbidden
    from backend.services import execution, plans
    from tests.plan_helpers import APPROVER, OPERATOR, T0, VIEWER, moves
    from tests.unit.test_execution_service import World

    world = World(tmp_path)
    traffic = TwinTraffic(world.twin)
    world.thread = execution.executor_thread(
        world.store, ["small"], lambda _c: world.gw, lambda _c: world.twin.assignment(),
        clock=world.now, holder="test",
        traffic=lambda _c: (traffic, ControlSettings(interval_seconds=2, hold_seconds=10,
                                                     network_capacity=2 * MB)))
    snap = world.twin.assignment()
    plan = plans.propose(world.store, OPERATOR, cluster="small", kind="reassignment",
                         content=moves(("a", 0, [3, 2])), preview={"bytes_to_move": 6 * MB},
                         snapshot=snap, throttle=MB,
                         throttle_mode={"mode": "adaptive", "floor": MB // 4}, now=T0)
    plans.approve(world.store, APPROVER, plan.id, sha256=plan.sha256,
                  topics_of=lambda *_: snap, now=T0 + timedelta(seconds=1))
    plans.request_execute(world.store, OPERATOR, plan.id, topics_of=lambda *_: snap,
                          now=T0 + timedelta(seconds=2))
    world.cycle(4)
    history = execution.throttle_history(world.store, plan.id)
    assert history["mode"] == "adaptive" and history["floor"] == MB // 4
    assert history["running"] and history["looks"]
    with pytest.raises(Forbidden):
        execution.switch_throttle(world.store, VIEWER, plan.id, "fixed", now=world.now())
    with pytest.raises(BadInput, match="mode"):
        execution.switch_throttle(world.store, OPERATOR, plan.id, "fast", now=world.now())
    after = execution.switch_throttle(world.store, OPERATOR, plan.id, "fixed", now=world.now())
    assert after["mode"] == "fixed" and after["switched_by"] == OPERATOR.name
    world.cycle(1)
    rates = {cfg[LEADER_RATE] for (e, _), cfg in world.throttles().items() if e == "broker"}
    assert rates <= {str(MB)}
    entries = [r for r in plans.audit_entries(world.store, plan=plan.id)
               if r.action == "throttle_mode_switched"]
    assert [(e.user, e.detail) for e in entries] == [(OPERATOR.name, {"mode": "fixed"})]
    world.until(plan.id, "completed")
    assert world.throttles() == {}
    with pytest.raises(Conflict, match="not a running reassignment"):
        execution.switch_throttle(world.store, OPERATOR, plan.id, "adaptive", now=world.now())


# ---- the Prometheus adapter and the config ----------------------------------------------------
class FakeMetrics:
    """A metrics client answering the catalog's per-broker concepts from a table."""

    by = "broker"

    def __init__(self, table: dict[str, dict[str, float]] | None) -> None:
        self.table, self.asked = table, []

    def instant(self, concept: str):
        import pandas as pd

        from backend.metrics.client import PrometheusUnavailable

        self.asked.append(concept)
        if self.table is None:
            raise PrometheusUnavailable("Prometheus at http://127.0.0.1:9 is not answering")
        rows = self.table[concept]
        return pd.DataFrame({"broker": list(rows), "value": list(rows.values())})


def test_prometheus_traffic_reads_the_catalog_and_says_when_it_cannot(monkeypatch):
    from backend.errors import Unavailable
    from backend.model.snapshot import Limits
    from backend.services import throttle_traffic
    from backend.services.cluster import ClusterSource

    table = {"bytes_out_per_broker": {"1": 10.0, "2": 20.0},
             "bytes_in_per_broker": {"1": 5.0, "2": 6.0},
             "replication_bytes_out_per_broker": {"1": 1.0, "2": 2.0},
             "replication_bytes_in_per_broker": {"1": 3.0, "2": 4.0}}
    fake = FakeMetrics(table)
    monkeypatch.setattr(throttle_traffic, "metrics_client", lambda _s: fake)
    source = ClusterSource("c", None, Limits(), prometheus_url="http://127.0.0.1:9")
    got = throttle_traffic.PrometheusTraffic(source).broker_traffic([2, 1])
    assert got.tx.tolist() == [22.0, 11.0] and got.rx.tolist() == [10.0, 8.0]
    assert got.sent.tolist() == [2.0, 1.0] and got.received.tolist() == [4.0, 3.0]
    assert set(fake.asked) == set(throttle_traffic.CONCEPTS)
    with pytest.raises(Unavailable, match="broker 3"):
        throttle_traffic.PrometheusTraffic(source).broker_traffic([1, 3])
    monkeypatch.setattr(throttle_traffic, "metrics_client", lambda _s: FakeMetrics(None))
    with pytest.raises(Unavailable, match="not answering"):
        throttle_traffic.PrometheusTraffic(source).broker_traffic([1])
    reader, settings = throttle_traffic.control_for(
        ClusterSource("c", None, Limits()), 10, 60, 1e9)
    assert reader is None and settings.interval_seconds == 10 and settings.hold_seconds == 60


def test_the_config_sets_each_clusters_adaptive_throttle():
    from backend.errors import BadInput
    from dashboard.config import parse_config

    def cluster(extra: dict) -> dict:
        return {"clusters": [{"name": "c", "gateway": {"type": "twin",
                                                        "url": "http://127.0.0.1:9"},
                              **extra}]}

    default = parse_config(cluster({}), "cfg").clusters[0].adaptive_throttle
    assert (default.interval_seconds, default.hold_seconds) == (30.0, 120.0)
    got = parse_config(cluster({"adaptive_throttle": {"interval_seconds": 10,
                                                      "network_capacity": 1.25e9}}),
                       "cfg").clusters[0].adaptive_throttle
    assert got.interval_seconds == 10 and got.network_capacity == 1.25e9
    with pytest.raises(BadInput, match="interval_seconds"):
        parse_config(cluster({"adaptive_throttle": {"interval_seconds": 0}}), "cfg")


def test_a_guard_holds_an_adaptive_plan_at_its_own_floor(tmp_path):
    """A guard pausing an adaptive plan drops the batch in flight to the plan's floor (not
    the cluster's guard floor), and the controller does not raise it while it holds; once
    clear, the plan resumes under its controller and ends with nothing left set."""
    from backend.engines.guards import Figures
    from backend.executor.guards import GUARD, Watch
    from backend.model.guards import GuardSettings, Windows
    from tests.unit.test_executor_guards import CLEAR, FakeHealth

    rig, _ = adaptive_rig(tmp_path)
    control = rig.executor.control
    rig.watch = Watch(GuardSettings(resume_after_seconds=30), Windows(), None)
    rig.watch.health = health = FakeHealth(rig)
    rig.executor = rig.new_executor()
    rig.executor.control = control
    ceiling, floor = 40 * MB, 3 * MB
    start_adaptive(rig, ceiling, floor)
    for _ in range(40):
        rig.step(1)
    assert rates_of(rig)
    health.figures_now = Figures(offline_partitions=1)
    for _ in range(3):
        ex = rig.step(1)
    assert ex.state == "paused" and ex.hold["kind"] == GUARD
    assert rates_of(rig)  # the batch in flight still moves
    for _ in range(90):  # three of the controller's intervals
        held = rates_of(rig)
        assert all(v == floor for r in held.values() for v in r), held
        rig.step(1)
    health.figures_now = CLEAR
    ex = rig.run(1)
    assert ex.state == "completed" and rig.throttle_configs() == {}
    assert "execution_released" in rig.journal.actions(1)
