"""The demo cluster (issue 7) and its scenarios: 9 brokers in 3 racks, 30,000
partitions (RF 3), brokers 3 and 2 near max.broker.partitions=12,500, a throttled
reassignment off broker 3, a tenant tripping the mutation quota. And the small cluster
of the recorded incident (incident.yaml) that the history fixture renders."""

from __future__ import annotations

from pathlib import Path

from backend.model.snapshot import Limits, Snapshot
from backend.twin.generate import generate_snapshot

SCENARIOS = Path(__file__).parent / "scenarios"
DEMO_SCENARIO = SCENARIOS / "demo.yaml"
INCIDENT_SCENARIO = SCENARIOS / "incident.yaml"
DEMO_LIMITS = Limits(max_broker_partitions=12_500, max_partitions=120_000)


def demo_snapshot() -> Snapshot:
    """Seeded, so broker 3 hosts 12,104 and broker 2 11,735 partition replicas."""
    return generate_snapshot(9, 3, 600, 30_000, 3, seed=2, skew=0.3, cluster="demo",
                             limits=DEMO_LIMITS)


INCIDENT_LIMITS = Limits(max_broker_partitions=180)


def incident_snapshot() -> Snapshot:
    """6 brokers in 3 racks, 300 partitions; broker 3 hosts 177 replicas (limit 180)."""
    return generate_snapshot(6, 3, 30, 300, 3, seed=1, skew=0.3, cluster="incident",
                             limits=INCIDENT_LIMITS)
