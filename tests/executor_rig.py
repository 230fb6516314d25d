"""The executor on the twin, in-process, for tests and benchmarks: a store on SQLite, a
twin behind its gateway, and a clock that is the twin's simulated time."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import Connection, create_engine, event

from backend.executor.freeze import executable_content
from backend.executor.guards import Watch
from backend.executor.loop import Executor
from backend.executor.retry import RetryPolicy
from backend.gateways.base import ClusterGateway
from backend.model.snapshot import Snapshot
from backend.store.audit_keys import AuditKeys
from backend.store.executions import ExecutionRecords
from backend.store.schema import metadata
from backend.store.store import Store
from backend.twin.cluster import TwinCluster, TwinSettings
from backend.twin.gateway import TwinGateway
from backend.twin.scenario import move_plan


@dataclass
class ListJournal:
    """Keeps the executor's audit entries and ends in lists, for assertions; an end's
    other writes (the execution row's) go to ``store``, as StoreJournal's do."""

    store: Store
    entries: list[tuple[str, str, dict, float]] = field(default_factory=list)
    ends: list[tuple[str, str, str | None]] = field(default_factory=list)

    def record(self, plan_id: str, action: str, detail: dict, now: float) -> None:
        self.entries.append((plan_id, action, detail, now))

    def ended(self, plan_id: str, state: str, cause: str | None, now: float,
              also: Callable[[Connection], None] | None = None) -> None:
        if also is not None:
            with self.store.write() as conn:
                also(conn)
        self.ends.append((plan_id, state, cause))

    def actions(self, plan_id: str | None = None) -> list[str]:
        return [a for p, a, _, _ in self.entries if plan_id in (None, p)]


class CountingGateway(TwinGateway):
    """The twin's gateway, counting how often each partition was sent to a new replica
    set (a partition moved twice would count 2)."""

    def __init__(self, twin: TwinCluster) -> None:
        super().__init__(twin)
        self.starts: Counter = Counter()

    def alter_reassignments(self, plan: dict) -> dict:
        out = super().alter_reassignments(plan)
        for name in out["started"]:
            self.starts[name] += 1
        return out


def sqlite_engine(path: Path):
    engine = create_engine(f"sqlite:///{path}")

    @event.listens_for(engine, "connect")
    def _pragmas(conn, _record) -> None:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA busy_timeout=5000")

    metadata.create_all(engine)
    return engine


TEST_KEYS = AuditKeys({"test": b"k" * 32}, "tests")  # the audit key ring of test stores


def sqlite_store(path: Path) -> Store:
    """A plan store on a fresh SQLite file with every table."""
    return Store(sqlite_engine(path), TEST_KEYS)


class Rig:
    """A twin, its gateway, a store and an executor; ``now`` is the twin's time."""

    def __init__(self, snap: Snapshot, db: Path, seed: int = 0,
                 retry: RetryPolicy | None = None, watch: Watch | None = None) -> None:
        self.twin = TwinCluster(snap, TwinSettings(seed=seed, traffic_noise=0.0))
        self.gw = CountingGateway(self.twin)
        self.client: ClusterGateway = self.gw  # what the executor talks to
        self.engine = sqlite_engine(db)
        self.records = ExecutionRecords(Store(self.engine, TEST_KEYS))
        self.journal = ListJournal(self.records.store)
        self.retry = retry
        self.watch = watch  # guards and windows (backend/executor/guards.py), if any
        self.executor = self.new_executor()

    def new_executor(self) -> Executor:
        """A fresh executor (as after a restart): nothing in memory, all from the store."""
        return Executor(self.records, self.client, self.journal, self.retry, self.watch)

    @property
    def now(self) -> float:
        return self.twin.now_seconds

    def start(self, plan_id: str, plan: dict, throttle: float | None,
              per_broker: int = 2, cluster: int = 1250,
              throttle_mode: dict | None = None) -> dict:
        """Store ``plan`` as approved and started (``throttle_mode``: an adaptive one's
        {"mode": "adaptive", "floor"}); the next tick runs it."""
        content = executable_content(self.twin.assignment(), plan, throttle, per_broker,
                                     cluster, throttle_mode)
        sha = hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()
        sizes = [len(b) for b in content["execution"]["batches"]]
        self.records.create(plan_id, self.twin.snap.cluster, content, sha, sizes, "op",
                            self.now)
        return content

    def step(self, plan_id: str, dt: float = 1.0) -> dict:
        ex = self.executor.tick(plan_id, self.now)
        self.twin.advance(dt)
        return ex

    def run(self, plan_id: str, dt: float = 1.0, limit: int = 10_000) -> dict:
        """Tick until the execution ends."""
        for _ in range(limit):
            ex = self.step(plan_id, dt)
            if ex.state in ("completed", "failed", "cancelled"):
                return ex
        raise AssertionError(f"plan {plan_id} still {ex.state} after {limit} ticks")

    def throttle_configs(self) -> dict:
        """Every throttle config on the twin, as {(entity_type, name): {key: value}}."""
        out = {}
        for etype, store in (("broker", self.twin.broker_configs),
                             ("topic", self.twin.topic_configs)):
            for name, cfg in store.items():
                kept = {k: v for k, v in cfg.items() if "throttled" in k}
                if kept:
                    out[(etype, name)] = kept
        return out


def drain_plan(snap: Snapshot, source: int, dest: int, count: int) -> dict:
    """Move ``count`` partitions' replicas from broker ``source`` to ``dest``."""
    return move_plan(snap, source, dest, count)


class Crash(BaseException):
    """The executor process dies here (nothing catches a BaseException it does not know)."""


class CrashingGateway(CountingGateway):
    """Dies before or after the n-th call the executor makes, as SIGKILL would."""

    def __init__(self, twin: TwinCluster) -> None:
        super().__init__(twin)
        self.calls = 0
        self.crash_at: tuple[int, bool] | None = None  # (call number, after the call?)

    def __getattribute__(self, name: str):
        attr = super().__getattribute__(name)
        if name.startswith("_") or not callable(attr) or name not in _GATEWAY_CALLS:
            return attr

        def call(*args, **kwargs):
            self.calls += 1
            crash = self.crash_at is not None and self.calls == self.crash_at[0]
            if crash and not self.crash_at[1]:
                raise Crash(name)
            out = attr(*args, **kwargs)
            if crash:
                raise Crash(name)
            return out
        return call


_GATEWAY_CALLS = {"describe_cluster", "describe_topics", "assignment", "describe_configs",
                  "list_reassignments", "alter_configs", "alter_reassignments",
                  "cancel_reassignments", "delete_partitions", "create_topics",
                  "describe_client_quotas"}


@dataclass
class CampaignResult:
    runs: int = 0
    completed: int = 0
    cancelled: int = 0
    other: list = field(default_factory=list)
    crashes: int = 0
    moved_twice: int = 0
    throttles_left: int = 0
    operator_not_restored: int = 0
    off_target: int = 0


def crash_campaign(runs: int, seed: int, tmp: Path, partitions: int = 6,
                   crash_p: float = 0.04, cancel_p: float = 0.01) -> CampaignResult:
    """``runs`` seeded plans on a small twin, the executor killed at random gateway calls
    (before or after the call) and restarted from the store; some cancelled midway."""
    import numpy as np

    from backend.engines.throttle import FOLLOWER_RATE, LEADER_RATE, LEADER_REPLICAS
    from backend.twin.generate import generate_snapshot

    out = CampaignResult()
    for run in range(runs):
        rng = np.random.default_rng([seed, run])
        snap = generate_snapshot(6, 3, 4, 24, 3, seed=int(rng.integers(1 << 30)))
        snap = _scaled(snap, 2e-4)  # megabytes, not gigabytes: seconds per move
        twin = TwinCluster(snap, TwinSettings(seed=run, traffic_noise=0.0))
        gw = CrashingGateway(twin)
        store = sqlite_store(tmp / f"run{run}.db")
        records, journal = ExecutionRecords(store), ListJournal(store)
        # an operator's own throttles, some on brokers and topics the plan touches
        for b in rng.choice(snap.broker_ids, 2, replace=False).tolist():
            twin.alter_configs("broker", str(b), {LEADER_RATE: str(int(rng.integers(1, 9e6)))})
        twin.alter_configs("broker", str(int(snap.broker_ids[0])), {FOLLOWER_RATE: "4242"})
        twin.alter_configs("topic", str(snap.topic_names[0]), {LEADER_REPLICAS: "0:1"})
        before = {k: v for k, v in Rig.throttle_configs(_Twin(twin)).items()}
        plan = random_plan(snap, partitions, rng)
        content = executable_content(snap, plan, float(rng.integers(1, 4)) * 1e6,
                                     int(rng.integers(1, 3)), 1250)
        sizes = [len(b) for b in content["execution"]["batches"]]
        records.create(run, snap.cluster, content, "x" * 64, sizes, "op", 0.0)
        executor = Executor(records, gw, journal, RetryPolicy())
        cancelled = False
        for _ in range(5000):
            if gw.crash_at is None and rng.random() < crash_p * 8:
                gw.crash_at = (gw.calls + int(rng.integers(1, 12)), bool(rng.random() < .5))
            if not cancelled and rng.random() < cancel_p:
                cancelled = records.request(run, ("running", "pausing", "paused"),
                                            "cancelling", twin.now_seconds)
            try:
                ex = executor.tick(run, twin.now_seconds)
            except Crash:
                out.crashes += 1
                gw.crash_at = None
                executor = Executor(records, gw, journal, RetryPolicy())  # restarted
                continue
            if ex.state in ("completed", "failed", "cancelled"):
                break
            twin.advance(1.0)
        out.runs += 1
        if ex.state == "completed":
            out.completed += 1
        elif ex.state == "cancelled":
            out.cancelled += 1
        else:
            out.other.append((run, ex.state, ex.cause))
        out.moved_twice += sum(1 for n in gw.starts.values() if n > 1)
        after = Rig.throttle_configs(_Twin(twin))
        out.throttles_left += sum(
            1 for k, cfg in after.items() for key, v in cfg.items()
            if before.get(k, {}).get(key) != v)
        out.operator_not_restored += sum(
            1 for k, cfg in before.items() for key, v in cfg.items()
            if after.get(k, {}).get(key) != v)
        if ex.state == "completed":
            out.off_target += sum(
                1 for e in plan["partitions"]
                if set(twin.snap.replicas_of(twin.snap.partition_row(e["topic"], e["partition"])))
                != set(e["replicas"]))
        store.close()
    return out


def random_plan(snap: Snapshot, partitions: int, rng) -> dict:
    """``partitions`` random partitions, each with one replica swapped for another broker
    (sometimes the leader)."""
    ids = snap.broker_ids.tolist()
    out = []
    for row in sorted(rng.choice(snap.n_partitions, partitions, replace=False).tolist()):
        reps = snap.replicas_of(row)
        free = [b for b in ids if b not in reps]
        reps[int(rng.integers(len(reps)))] = int(rng.choice(free))
        out.append({"topic": str(snap.topic_names[snap.part_topic[row]]),
                    "partition": int(snap.part_id[row]), "replicas": reps})
    return {"version": 1, "partitions": out}


@dataclass
class _Twin:
    """Lets Rig.throttle_configs read a bare twin."""

    twin: TwinCluster


def _scaled(snap: Snapshot, factor: float) -> Snapshot:
    from dataclasses import replace

    return replace(snap, part_size=(snap.part_size * factor).astype("int64"),
                   part_rate=snap.part_rate * factor)


class TwinTraffic:
    """The adaptive throttle's traffic reader on the twin, in process: each broker's
    bytes/s since the previous read, from the twin's counters (what Prometheus's rate()
    over its exporter gives); ``down`` makes it not answer, as a dead Prometheus."""

    def __init__(self, twin: TwinCluster) -> None:
        self.twin, self.down = twin, False
        self._last: tuple[float, dict] | None = None

    def broker_traffic(self, brokers: list[int]):
        import numpy as np

        from backend.errors import Unavailable
        from backend.executor.adaptive import BrokerTraffic

        if self.down:
            raise Unavailable("Prometheus", "at http://127.0.0.1:9 is not answering")
        twin = self.twin
        now = {"in": twin.state.bytes_in.sum(axis=1).copy(),
               **{k: v.copy() for k, v in twin.counters.items()}}
        last = self._last
        self._last = (twin.now_seconds, now)
        dt = twin.now_seconds - last[0] if last else 0.0
        rate = {k: (v - last[1][k]) / dt if dt > 0 else np.zeros_like(v)
                for k, v in now.items()}
        pos = twin.snap.broker_positions(brokers)
        fanout = twin.settings.consumer_fanout
        return BrokerTraffic(tx=rate["in"][pos] * fanout + rate["replication_out"][pos],
                             rx=rate["in"][pos] + rate["replication_in"][pos],
                             sent=rate["replication_out"][pos],
                             received=rate["replication_in"][pos])
