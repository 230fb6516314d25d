"""Guard-rail stops: which of a cluster's conditions a running plan breaches now.

Pure: the figures are read elsewhere (services.guards over Prometheus and the gateway)
and the executor acts on the answer (backend/executor/guards.py). Each breach names its
condition, the value seen and the limit, in words for the banner and the audit log.

- offline partitions, under-min-ISR partitions: Kafka's controller and replica-manager
  gauges (OfflinePartitionsCount, UnderMinIsrPartitionCount);
- under-replicated partitions outside the plan: UnderReplicatedPartitions does not count
  a moving partition's adding replicas (Kafka's Partition.isUnderReplicated compares the
  ISR with AssignmentState.replicationFactor, which leaves them out), so the gauge is the
  count outside the plan's moves;
- a broker the next batch touches (a source or a destination) is down;
- the next batch would put a broker over max.broker.partitions or the cluster over
  max.partitions (KIP-578), against the live counts (engines.limits.check_reassignment);
- a stalled move: a moving partition whose bytes behind have not fallen for T minutes.

A figure not known (None: Prometheus or the cluster did not answer, or answered for only
some brokers) neither starts a hold nor ends one: a condition the plan is held on stays
breached, as "unknown", until its figure is read again. A missed scrape must not let a
held plan start its next batch during the incident that held it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import pairwise

from backend.model.guards import GuardSettings

Key = tuple[str, int]  # (topic, partition)


@dataclass(frozen=True)
class Figures:
    """The cluster now, as the guards read it (None: not known)."""

    offline_partitions: int | None = None
    under_min_isr: int | None = None
    under_replicated: int | None = None
    down_brokers: frozenset[int] | None = frozenset()
    lag: dict[Key, float] | None = field(default_factory=dict)  # bytes behind, per move


@dataclass(frozen=True)
class Breach:
    condition: str  # offline_partitions | under_min_isr | under_replicated | broker_down
    # | partition_limit | stalled_move
    value: float | str
    limit: float | str
    text: str

    def to_dict(self) -> dict:
        return {"condition": self.condition, "value": self.value, "limit": self.limit,
                "text": self.text}


def breaches(settings: GuardSettings, figures: Figures, touched: frozenset[int],
             limit_violations: list[dict], stalled: list[tuple[Key, float]],
             held: frozenset[str] = frozenset()) -> list[Breach]:
    """The conditions breached now. ``touched``: brokers the next batch moves from or to
    (empty when no batch is to start); ``limit_violations``: check_reassignment's for the
    next batch on the live counts; ``stalled``: (partition, minutes) from ``stalls``;
    ``held``: the conditions the plan is held on now (kept while their figure is unknown)."""
    if not settings.enabled:
        return []
    out = []
    for name, value, limit, what in (
            ("offline_partitions", figures.offline_partitions, settings.offline_partitions,
             "offline partitions"),
            ("under_min_isr", figures.under_min_isr, settings.under_min_isr,
             "partitions under min.insync.replicas"),
            ("under_replicated", figures.under_replicated, settings.under_replicated,
             "under-replicated partitions outside the plan")):
        if value is None and name in held:
            out.append(_unknown(name, limit, what, "Prometheus did not answer for every "
                                                   "broker up"))
        elif value is not None and value > limit:
            out.append(Breach(name, value, limit, f"{value} {what} (more than {limit})"))
    if figures.down_brokers is None:
        if "broker_down" in held:
            out.append(_unknown("broker_down", "up", "the brokers up",
                                "the cluster did not answer"))
    elif settings.broker_down and (down := sorted(figures.down_brokers & touched)):
        out.append(Breach("broker_down", ",".join(map(str, down)), "up",
                          f"broker {', '.join(map(str, down))} is down and the next batch "
                          f"moves replicas from or to it"))
    if settings.partition_limits:
        for v in limit_violations:
            where = f"broker {v['broker']}" if v["broker"] is not None else "the cluster"
            key = "max.broker.partitions" if v["broker"] is not None else "max.partitions"
            out.append(Breach("partition_limit", v["after"], v["limit"],
                              f"the next batch would put {where} at {v['after']} partitions, "
                              f"over {key} {v['limit']} (KIP-578)"))
    if figures.lag is None and "stalled_move" in held:
        out.append(_unknown("stalled_move", settings.stall_minutes, "the moves' progress",
                            "Prometheus did not answer"))
    elif stalled:
        (topic, part), minutes = stalled[0]
        more = f" (and {len(stalled) - 1} more)" if len(stalled) > 1 else ""
        out.append(Breach("stalled_move", f"{topic}-{part}", settings.stall_minutes,
                          f"the move of {topic}-{part} has not progressed for "
                          f"{minutes:.0f} min{more}"))
    return out


def _unknown(name: str, limit: float | str, what: str, why: str) -> Breach:
    return Breach(name, "unknown", limit, f"{what}: not known now ({why}); held until read "
                                          f"again")


def stalls(history: dict[Key, list[tuple[float, float]]], now: float,
           minutes: float) -> list[tuple[Key, float]]:
    """Moving partitions whose bytes behind have not fallen for ``minutes``: (partition,
    minutes since its lag last fell), longest first. ``history``: per partition, (time,
    bytes behind) samples, oldest first."""
    out = []
    for key, samples in history.items():
        if not samples or now - samples[0][0] < minutes * 60:
            continue
        last_fall = samples[0][0]
        for (_, prev), (t, lag) in pairwise(samples):
            if lag < prev:
                last_fall = t
        if samples[-1][1] > 0 and now - last_fall >= minutes * 60:
            out.append((key, (now - last_fall) / 60))
    return sorted(out, key=lambda kv: (-kv[1], kv[0]))
