"""Plan previews at issue 11's scale: a 100k-move reassignment on 100 brokers and 200k
partitions (RF 3).

Target: the preview's first paint <= 2 s. Timed in headless chromium on /reassignments:
the plan file (Kafka's JSON, 100k entries, one replica of each partition moved) is chosen
in the upload control first, as an operator does; the clock starts at the click on
Preview and stops when the before/after bars are drawn and the diff grid shows its first
rows (the server validates and previews the uploaded plan, the browser draws). The
service alone (validate, preview, diff grid) is timed beside it, and so is the approver's
first paint: the same plan proposed, its page /plans/<id> opened until the bars and the
grid's first rows are drawn (the stored plan is read from SQLite).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from backend.model.io import save_snapshot
from backend.model.snapshot import Limits, Snapshot
from backend.services import plan_preview
from backend.twin.generate import generate_snapshot
from benchmarks.common import Figure, best_of, server_cpu

MOVES = 100_000
RUNS = 3


def big_cluster() -> Snapshot:
    snap = generate_snapshot(100, 10, 2000, 200_000, 3, seed=7, cluster="big")
    return snap.with_limits(Limits(max_broker_partitions=7000, max_partitions=1_000_000))


def moving_plan(snap: Snapshot, moves: int = MOVES, seed: int = 3) -> dict:
    """Kafka's JSON moving the last replica of ``moves`` random partitions to another
    broker of the same rack (rack spread kept, as a real balancing plan keeps it)."""
    rng = np.random.default_rng(seed)
    rows = np.sort(rng.choice(snap.n_partitions, moves, replace=False))
    reps = snap.replica_broker.reshape(-1, 3)[rows]
    rack = snap.broker_rack_index
    members = [np.flatnonzero(rack == r) for r in range(len(snap.rack_names))]
    size = min(len(m) for m in members)
    table = np.array([m[:size] for m in members])  # rack -> its brokers
    target = table[rack[reps[:, 2]], rng.integers(0, size, len(rows))]
    clash = (target[:, None] == reps).any(axis=1)
    while clash.any():
        target[clash] = table[rack[reps[clash, 2]], rng.integers(0, size, int(clash.sum()))]
        clash = (target[:, None] == reps).any(axis=1)
    new = reps.copy()
    new[:, 2] = target
    topics = snap.topic_names[snap.part_topic[rows]].tolist()
    parts = snap.part_id[rows].tolist()
    ids = snap.broker_ids[new].tolist()
    return {"version": 1, "partitions": [{"topic": t, "partition": p, "replicas": r}
                                         for t, p, r in zip(topics, parts, ids, strict=True)]}


def _service(snap: Snapshot, plan: dict) -> float:
    seconds, _ = best_of(lambda: plan_preview.from_kafka_json(snap, plan), repeat=RUNS)
    return seconds


def _drawn(driver) -> bool:
    from selenium.webdriver.common.by import By

    return bool(driver.find_elements(By.CSS_SELECTOR, "#plan-bars g.point")
                and driver.find_elements(By.CSS_SELECTOR, "#plan-grid .ag-row .ag-cell"))


def _browser_first_paint(tmp: Path, snap: Snapshot, plan: dict
                         ) -> tuple[list[float], list[float], list[float]]:
    """Preview first paints, stored page first paints, and the server's CPU seconds for
    each stored page (user + sys: what the shared machine's load does not inflate)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from benchmarks.bench_dashboard import _browser
    from tests.e2e.conftest import start_dashboard, stop

    save_snapshot(snap, tmp / "big.parquet")
    plan_file = tmp / "plan-100k.json"
    plan_file.write_text(json.dumps(plan))
    store_url = f"sqlite:///{tmp / 'railyard.db'}"
    dash = start_dashboard(tmp, {"clusters": [{
        "name": "big", "gateway": {"type": "twin", "url": "http://127.0.0.1:9"},
        "snapshot": str(tmp / "big.parquet")}], "store": {"url": store_url}})
    driver = _browser()
    times, views, cpu = [], [], []
    try:
        for _ in range(RUNS + 1):  # the first run warms the server's snapshot cache
            driver.get(dash.url + "/reassignments")
            WebDriverWait(driver, 60).until(lambda d: d.find_elements(By.ID, "ra-run"))
            driver.find_element(By.CSS_SELECTOR, "#ra-upload input[type=file]").send_keys(
                str(plan_file))
            WebDriverWait(driver, 60).until(
                lambda d: "plan-100k.json" in d.find_element(By.ID, "ra-upload-name").text)
            t0 = time.perf_counter()
            driver.find_element(By.ID, "ra-run").click()
            WebDriverWait(driver, 120, poll_frequency=0.01).until(_drawn)
            times.append(time.perf_counter() - t0)
            text = driver.find_element(By.ID, "plan-cards").text
            assert f"{MOVES:,}" in text, text
        plan_id = _propose(store_url, snap, plan)
        for _ in range(RUNS):
            driver.get("about:blank")
            c0, t0 = server_cpu(dash.proc.pid), time.perf_counter()
            driver.get(f"{dash.url}/plans/{plan_id}")
            WebDriverWait(driver, 120, poll_frequency=0.01).until(_drawn)
            views.append(time.perf_counter() - t0)
            cpu.append(server_cpu(dash.proc.pid) - c0)
    finally:
        driver.quit()
        stop(dash.proc)
    return times[1:], views, cpu


def _propose(store_url: str, snap: Snapshot, plan: dict) -> int:
    """The plan stored as proposed, as the page's Propose stores it."""
    from backend.services import plans
    from backend.store.store import open_store
    from backend.store.workflow import Actor

    draft = plan_preview.from_kafka_json(snap, plan)
    store = open_store(store_url)
    try:
        return plans.propose(store, Actor("bench", "operator"), cluster=snap.cluster,
                             kind="reassignment", content=draft.content,
                             preview=draft.preview, snapshot=snap,
                             throttle=round(draft.preview["throttle"])).id
    finally:
        store.engine.dispose()


def run() -> list[Figure]:
    snap = big_cluster()
    plan = moving_plan(snap)
    load = "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    figures = [Figure("plan preview service, 100k moves (validate, preview, diff grid)",
                      _service(snap, plan), "s", 1.0,
                      note=f"100 brokers, 200k partitions; best of {RUNS}; {load}")]
    if shutil.which("chromium") and shutil.which("chromedriver"):
        with tempfile.TemporaryDirectory(prefix="railyard-bench-plans-") as tmp:
            times, views, cpu = _browser_first_paint(Path(tmp), snap, plan)
        load = "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
        figures.append(Figure(
            "reassignment preview first paint, 100k moves (median)", statistics.median(times),
            "s", 2.0, note=f"upload chosen, click Preview -> bars and first grid rows drawn; "
                           f"runs {', '.join(f'{t:.2f}' for t in times)} s; {load}"))
        figures.append(Figure(
            "stored plan page first paint, 100k moves (median)", statistics.median(views),
            "s", 2.0, note=f"open /plans/<id> -> bars and first grid rows drawn; runs "
                           f"{', '.join(f'{t:.2f}' for t in views)} s; the server's CPU "
                           f"{', '.join(f'{c:.2f}' for c in cpu)} s; {load}"))
    return figures
