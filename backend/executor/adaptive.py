"""The adaptive throttle of a running reassignment: every interval (30 s by default, per
cluster) read each throttled broker's traffic, and set its leader and follower rates to
kafka-kit autothrottle's (engines.throttle.adaptive_rates: replicationHeadroom, clamped
to [floor, ceiling], changed only past the 10% threshold), on the configs this plan set
only (the book holds them).

The traffic comes through a ``TrafficReader`` the executor is given (a services adapter
over the Prometheus catalog: backend/services/throttle_traffic.py); no PromQL here. When
it does not answer, the rates set last are held for ``hold_seconds``, then every rate
drops to the floor (kafka-kit's --failure-threshold reverts to its --min-rate the same
way), and each look says so in its note. A user with the execute right switches a
running plan between fixed (the approved throttle) and adaptive (services.execution).

Every change is an audit entry ("throttle_adjusted"), and every look is a row of the
store (ExecutionRecords.add_throttle_tick) for the plan page's chart.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from backend.engines.throttle import (
    AUTOTHROTTLE_CHANGE_PCT,
    DEFAULT_NETWORK_CAPACITY,
    FOLLOWER_RATE,
    LEADER_RATE,
    adaptive_rates,
)
from backend.errors import Unavailable
from backend.executor.book import ConfigBook, Configs
from backend.executor.freeze import ExecutionSpec
from backend.executor.journal import Journal
from backend.store.executions import ExecutionRecords

FIXED, ADAPTIVE = "fixed", "adaptive"


@dataclass(frozen=True)
class BrokerTraffic:
    """Bytes/s per broker, in the order the reader was asked for them: all traffic out
    (consumers and replication) and in (producers and replication), and the replication
    part of each (what the chart shows beside the throttle)."""

    tx: np.ndarray
    rx: np.ndarray
    sent: np.ndarray
    received: np.ndarray


class TrafficReader(Protocol):
    """Where the controller reads traffic; ``Unavailable`` when it cannot answer now."""

    def broker_traffic(self, brokers: list[int]) -> BrokerTraffic: ...


@dataclass(frozen=True)
class ControlSettings:
    """A cluster's adaptive-throttle knobs (the dashboard config's ``adaptive_throttle``)."""

    interval_seconds: float = 30.0  # between looks at the traffic
    hold_seconds: float = 120.0  # Prometheus silent this long: every rate to the floor
    network_capacity: float = DEFAULT_NETWORK_CAPACITY  # bytes/s per broker, each way
    change_pct: float = AUTOTHROTTLE_CHANGE_PCT


class NoTraffic:
    """The reader of a cluster without Prometheus: never answers (adaptive plans hold,
    then run at their floor)."""

    def broker_traffic(self, brokers: list[int]) -> BrokerTraffic:
        raise Unavailable("Prometheus", "none is configured for this cluster")


class ThrottleControl:
    """The adaptive throttle of one cluster's executions (in memory: when each plan last
    looked and last had an answer; the rates themselves are the book's)."""

    def __init__(self, records: ExecutionRecords, journal: Journal,
                 reader: TrafficReader | None = None,
                 settings: ControlSettings | None = None) -> None:
        self.records, self.journal = records, journal
        self.reader = reader or NoTraffic()
        self.settings = settings or ControlSettings()
        self._looked: dict[int, tuple[float, frozenset[str]]] = {}  # plan -> (at, brokers)
        self._answered: dict[int, float] = {}  # plan -> last answer (or first silence)
        # plan -> the broker rates its last look chose, {(broker, key): value}: a batch
        # ends with its configs removed, and the next one on the same brokers starts at
        # these, not at the ceiling until the next look (which is not due yet)
        self._chosen: dict[int, dict[tuple[str, str], str]] = {}

    def mode(self, plan_id: int, spec: ExecutionSpec) -> tuple[str, int | None, bool]:
        """(fixed | adaptive, floor, switched by a user): a user's switch, else as
        approved."""
        row = self.records.throttle_mode(plan_id)
        if row is not None:
            return row["mode"], row["floor"], True
        if spec.throttle_mode is not None:
            return ADAPTIVE, int(spec.throttle_mode["floor"]), False
        return FIXED, None, False

    def forget(self, plan_id: int) -> None:
        """A plan that ended: its looks, silences and chosen rates are not needed again."""
        for memory in (self._looked, self._answered, self._chosen):
            memory.pop(plan_id, None)

    def shape(self, plan_id: int, spec: ExecutionSpec, configs: Configs,
              book: ConfigBook) -> Configs:
        """The configs of the moves in flight with an adaptive plan's broker rates as the
        controller set them, held or chosen at its last look (a broker new to the plan
        starts at the ceiling until the next look, which comes at once); a fixed plan's
        unchanged."""
        if spec.throttle is None or self.mode(plan_id, spec)[0] == FIXED:
            return configs  # the approved throttle on every broker
        held = {**self._chosen.get(plan_id, {}),
                **{(r["name"], r["key"]): r["value"] for r in book.records()
                   if r["entity_type"] == "broker"}}
        return {(etype, name): {k: held.get((name, k), v) if etype == "broker" else v
                                for k, v in values.items()}
                for (etype, name), values in configs.items()}

    def tick(self, plan_id: int, spec: ExecutionSpec, book: ConfigBook, now: float,
             bytes_left: int) -> None:
        """One look, when due: every ``interval_seconds``, or at once when the plan's
        throttled brokers changed. A plan switched to fixed goes back to the ceiling."""
        if spec.throttle is None:
            return
        mode, floor, switched = self.mode(plan_id, spec)
        if mode == FIXED and not switched:
            return  # approved fixed, never switched: the executor as it always ran
        booked = book.records()
        rates = _broker_rates(booked)
        if not rates:
            return
        ceiling = spec.throttle
        names = sorted(rates, key=int)
        if mode == FIXED:
            if any(float(v) != ceiling for r in rates.values() for v in r.values()):
                self._apply(plan_id, book, booked, names, np.full(len(names), ceiling),
                            np.full(len(names), ceiling), now, FIXED, None, None, bytes_left)
            self._looked.pop(plan_id, None)
            self._chosen.pop(plan_id, None)
            return
        last = self._looked.get(plan_id)
        if last is not None and now - last[0] < self.settings.interval_seconds \
                and last[1] == frozenset(names):
            return
        self._looked[plan_id] = (now, frozenset(names))
        prev_l = np.array([float(rates[n].get(LEADER_RATE, "nan")) for n in names])
        prev_f = np.array([float(rates[n].get(FOLLOWER_RATE, "nan")) for n in names])
        traffic, note = None, None
        try:
            traffic = self.reader.broker_traffic([int(n) for n in names])
            self._answered[plan_id] = now
            leader, follower = adaptive_rates(traffic.tx, traffic.rx, prev_l, prev_f,
                                              self.settings.network_capacity, ceiling,
                                              floor, self.settings.change_pct)
        except Unavailable as e:
            silent = now - self._answered.setdefault(plan_id, now)
            if silent < self.settings.hold_seconds:
                leader, follower = prev_l, prev_f
                note = (f"Prometheus is not answering ({e}): holding the last rates "
                        f"{self.settings.hold_seconds - silent:.0f} s more")
            else:
                leader = follower = np.full(len(names), float(floor))
                note = (f"Prometheus has not answered for {silent:.0f} s ({e}): every rate "
                        f"at the floor")
        self._apply(plan_id, book, booked, names, leader, follower, now, ADAPTIVE, traffic,
                    note, bytes_left)

    def _apply(self, plan_id: int, book: ConfigBook, booked: list[dict], names: list[str],
               leader: np.ndarray, follower: np.ndarray, now: float, mode: str,
               traffic: BrokerTraffic | None, note: str | None, bytes_left: int) -> None:
        """Set the rates that changed (through the book: only configs this plan holds),
        audit the change, and keep the look."""
        desired: Configs = {}
        for r in booked:
            desired.setdefault((r["entity_type"], r["name"]), {})[r["key"]] = r["value"]
        changed = {}
        for i, n in enumerate(names):
            values = desired[("broker", n)]
            for key, rate in ((LEADER_RATE, leader[i]), (FOLLOWER_RATE, follower[i])):
                if key in values and np.isfinite(rate) and values[key] != str(int(rate)):
                    values[key] = str(int(rate))
                    changed.setdefault(n, {})[key] = int(rate)
        if mode == ADAPTIVE:
            self._chosen[plan_id] = {(n, k): v for (etype, n), values in desired.items()
                                     if etype == "broker" for k, v in values.items()
                                     if k in (LEADER_RATE, FOLLOWER_RATE)}
        if changed:
            book.sync(desired, now)
            self.journal.record(plan_id, "throttle_adjusted", {
                "mode": mode, "brokers": changed, **({"note": note} if note else {})}, now)
        brokers = {}
        for i, n in enumerate(names):
            values = desired[("broker", n)]
            brokers[n] = {"leader": _int(values.get(LEADER_RATE)),
                          "follower": _int(values.get(FOLLOWER_RATE)),
                          "sent": None if traffic is None else float(traffic.sent[i]),
                          "received": None if traffic is None else float(traffic.received[i])}
        pace = min((v for b in brokers.values() for v in (b["leader"], b["follower"])
                    if v is not None), default=None)
        eta = bytes_left / pace if pace and bytes_left > 0 else None
        self.records.add_throttle_tick(plan_id, now, mode, brokers, eta, note)


def _broker_rates(booked: list[dict]) -> dict[str, dict[str, str]]:
    """The KIP-73 rates this plan holds, per broker id."""
    out: dict[str, dict[str, str]] = {}
    for r in booked:
        if r["entity_type"] == "broker" and r["key"] in (LEADER_RATE, FOLLOWER_RATE):
            out.setdefault(r["name"], {})[r["key"]] = r["value"]
    return out


def _int(value: str | None) -> int | None:
    return None if value is None else int(float(value))
