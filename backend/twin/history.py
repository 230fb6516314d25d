"""A twin's metrics over time as OpenMetrics, for `promtool tsdb create-blocks-from
openmetrics`: what Prometheus would have scraped from every broker every ``step`` seconds,
with the scrape labels (broker, cluster) and ``up``; a dead broker has only up=0."""

from __future__ import annotations

import os
from collections import defaultdict

from backend.metrics.dialects import Dialect
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
