"""A twin's metrics over time as OpenMetrics, for `promtool tsdb create-blocks-from
openmetrics`: what Prometheus would have scraped from every broker every ``step`` seconds,
with the scrape labels (broker, cluster) and ``up``; a dead broker has only up=0 (an
incident hour, ``record_openmetrics``). And the months a cluster took to grow into its
snapshot, as daily partition counts (a capacity review's history,
``record_growth_openmetrics``)."""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path

import numpy as np

from backend.metrics.dialects import Dialect
from backend.model.snapshot import Snapshot
from backend.twin.exporter import Family, broker_families
from backend.twin.scenario import ScenarioRunner


def _series_lines(fam: Family, extra: str, ts: str) -> list[str]:
    cols = fam.label_columns()
    out = []
    for i, value in enumerate(fam.values.tolist()):
        labels = [f'{lab}="{col[i]}"' for lab, col in zip(fam.labels, cols, strict=True)]
        out.append(f"{fam.name}{{{','.join([*labels, extra])}}} {value!r} {ts}")
    return out


def record_openmetrics(runner: ScenarioRunner, dialect: Dialect, until: float, step: float,
                       epoch: float, path: str | os.PathLike) -> int:
    """Run ``runner`` to ``until`` seconds, sampling every ``step``; simulated time t is
    written at ``epoch + t``. Returns the number of samples written."""
    twin = runner.twin
    lines: dict[str, list[str]] = defaultdict(list)
    kinds: dict[str, str] = {"up": "gauge"}
    t = twin.now_seconds
    while t <= until + 1e-9:
        runner.advance_to(t)
        ts = f"{epoch + twin.now_seconds:.3f}"
        with twin.lock:
            for b, bid in enumerate(twin.snap.broker_ids.tolist()):
                extra = f'broker="{bid}",cluster="{twin.snap.cluster}"'
                alive = bool(twin.state.alive[b])
                lines["up"].append(f"up{{{extra}}} {int(alive)} {ts}")
                if not alive:
                    continue
                for fam in broker_families(twin, b, dialect):
                    base = fam.name[:-6] if fam.kind == "counter" and fam.name.endswith(
                        "_total") else fam.name
                    kinds[base] = fam.kind
                    lines[base] += _series_lines(fam, extra, ts)
        t += step
    n = 0
    with open(path, "w", encoding="utf-8") as f:
        for base, samples in lines.items():
            f.write(f"# TYPE {base} {kinds[base]}\n")
            f.write("\n".join(samples) + "\n")
            n += len(samples)
        f.write("# EOF\n")
    return n


GROWTH_DAYS = 91  # the capacity page's longest window (90 days) and today
GROWTH_SHARE = 0.15  # of the snapshot's replicas, in small topics created day by day
SMALL_TOPIC = 4  # a small topic has at most this many times the median topic's partitions
STEP_SHARE = 0.02  # the one-off step: the smallest topic holding this share of replicas
DAY = 86_400


def topic_creation_days(snap: Snapshot, days: int = GROWTH_DAYS, seed: int = 0) -> np.ndarray:
    """Per topic, how many days before the snapshot it was created (> ``days``: before the
    recorded window): a cluster growing steadily by small topics created on random days
    (``GROWTH_SHARE`` of its replicas), and once, halfway back, by one large topic (a
    one-off step a forecast must not read as growth); the snapshot is what it grew into."""
    rng = np.random.default_rng(seed)
    partitions = np.bincount(snap.part_topic, minlength=snap.n_topics)
    replicas = np.bincount(snap.part_topic, weights=np.diff(snap.replica_offsets),
                           minlength=snap.n_topics)
    small = rng.permutation(np.flatnonzero(partitions <= SMALL_TOPIC * np.median(partitions)))
    newest = small[np.cumsum(replicas[small]) <= GROWTH_SHARE * replicas.sum()]
    created = np.full(snap.n_topics, days + 1)
    created[newest] = rng.integers(0, days, len(newest))
    large = np.flatnonzero(replicas >= STEP_SHARE * replicas.sum())
    if len(large):
        created[large[np.argmin(replicas[large])]] = days // 2
    return created


def record_growth_openmetrics(snap: Snapshot, dialect: Dialect, end: float,
                              path: str | os.PathLike, days: int = GROWTH_DAYS,
                              seed: int = 0) -> int:
    """The partition counts (``dialect.partition_count``, labelled broker and cluster as
    the demo's scrape labels them) Prometheus would have scraped from each broker of a
    cluster that grew into ``snap`` (``topic_creation_days``): one sample at every UTC
    midnight of the ``days`` before ``end`` and one at ``end``, for `promtool tsdb
    create-blocks-from openmetrics`. Returns the number of samples written."""
    created = topic_creation_days(snap, days, seed)
    replica_topic = snap.part_topic[snap.replica_partition]
    cells = np.zeros((snap.n_topics, snap.n_brokers))
    np.add.at(cells, (replica_topic, snap.replica_broker), 1)
    midnight = end // DAY * DAY
    times = [*(midnight - d * DAY for d in range(days - 1, -1, -1)), end]
    ago = [max(0, int((end - t) // DAY)) for t in times]
    name, ids = dialect.partition_count, snap.broker_ids.tolist()
    lines = [f"# TYPE {name} gauge"]
    for b, bid in enumerate(ids):
        labels = f'{{broker="{bid}",cluster="{snap.cluster}"}}'
        lines += [f"{name}{labels} {cells[created >= a, b].sum():.0f} {t:.3f}"
                  for t, a in zip(times, ago, strict=True)]
    Path(path).write_text("\n".join([*lines, "# EOF", ""]), encoding="utf-8")
    return len(lines) - 1
