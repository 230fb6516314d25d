"""Capacity forecasts (issue 17's targets): 1,000 brokers x 90 days of 5-minute samples
fitted in <= 2 s; the HTML report in <= 10 s; a fleet of 200 clusters on Spark local[2]
(figure only). The machine is shared: each figure carries the load average."""

from __future__ import annotations

import os
import time

import numpy as np

from backend.engines import forecast as fc
from backend.model.snapshot import Limits
from benchmarks.common import Figure, best_of

BROKERS, DAYS, EVERY = 1_000, 90, 300
FLEET, FLEET_BROKERS = 200, 12
END = 1_706_655_600.0


def load() -> str:
    return "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def samples(brokers: int, days: int, every: float, seed: int = 5):
    """Growing counts with noise and a big topic's step on a tenth of the brokers."""
    rng = np.random.default_rng(seed)
    times = END - (np.arange(days * 86_400 // int(every))[::-1] * every)
    d = (times - times[0]) / 86_400
    growth = rng.uniform(0, 20, brokers)[:, None]
    values = 1_000 + growth * d + rng.normal(0, 5, (brokers, len(times)))
    values[: brokers // 10] += np.where(d >= days / 2, 300, 0)
    return times, np.round(values)


def history(name: str, brokers: int, seed: int) -> dict:
    times, values = samples(brokers, DAYS, 86_400.0, seed)
    return {"cluster": name, "times": times, "brokers": [str(b) for b in range(brokers)],
            "broker_values": values, "cluster_values": values.sum(axis=0), "start": times[0],
            "end": END, "limits": Limits(4_000, 4_000 * brokers)}


def run() -> list[Figure]:
    times, values = samples(BROKERS, DAYS, EVERY)
    limits = Limits(4_000, 3_000_000)
    seconds, answer = best_of(lambda: fc.forecast(times, [str(b) for b in range(BROKERS)],
                                                  values, values.sum(axis=0), limits), 2)
    figures = [Figure(f"forecast {BROKERS:,} brokers x {DAYS} days of 5-min samples", seconds,
                      "s", 2.0, note=f"{values.size:,} samples; {load()}")]
    figures.append(_report(answer))
    figures.append(_fleet())
    return figures


def _report(_: dict) -> Figure:
    from dashboard.reports import capacity_documents
    h = history("bench", 100, 1)
    answer = fc.forecast(h["times"], h["brokers"], h["broker_values"], h["cluster_values"],
                         h["limits"])
    answer.update({"cluster": "bench", "history": h, "window_days": DAYS,
                   "scenario": fc.AS_IS.__dict__, "made_at": "now", "data": "synthetic"})
    t0 = time.perf_counter()
    html, _csv = capacity_documents(answer, "in 90 days")
    size = len(html())
    return Figure("HTML capacity report (100 brokers)", time.perf_counter() - t0, "s", 10.0,
                  note=f"{size / 1e6:.1f} MB self-contained; {load()}")


def _fleet() -> Figure:
    from backend.services import whatif
    from backend.services.capacity import scenario_grid
    from backend.spark.session import get_session, settings_from, stop_session
    from backend.spark.spec import FleetCluster, FleetHistory, FleetSpec

    def spec(clusters: list[dict]) -> FleetSpec:
        return FleetSpec(tuple(FleetCluster(h["cluster"], (), None, FleetHistory(
            h["times"], tuple(h["brokers"]), h["broker_values"], h["cluster_values"],
            h["limits"].max_broker_partitions, h["limits"].max_partitions))
            for h in clusters), scenario_grid(fc.AS_IS))

    fleet = [history(f"c{i}", FLEET_BROKERS, i) for i in range(FLEET)]
    settings = settings_from(master="local[2]")
    try:
        get_session(settings)
        whatif.run(spec(fleet[:2]), settings)  # warm the Python workers
        t0 = time.perf_counter()
        rows = whatif.run(spec(fleet), settings).num_rows
        seconds = time.perf_counter() - t0
    finally:
        stop_session()
    return Figure(f"fleet forecast, {FLEET} clusters x {FLEET_BROKERS} brokers, Spark local[2]",
                  seconds, "s", 60.0, note=f"{rows:,} rows (the fleet sweep kind); figure, "
                  f"no target in the issue (60 s is ours); {load()}")
