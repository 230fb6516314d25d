"""The fleet's queue (/queue, issue 29) at fleet scale: 200 clusters and 5,000 plans in a
PostgreSQL store.

Targets: the queue's first paint <= 2 s (headless chromium: from opening /queue to the
grid's rows drawn, median of 5 visits), and a refresh p95 <= 300 ms (the page's own live
refresh, timed in the page from the request to its answer read, 20 of them, while one
plan changes state every other second so some refreshes carry rows and some carry none).
Beside them, the service's answer alone (best of 5) and the statements it takes.

The store holds what a fleet accumulates: most plans ended (completed, rejected, expired,
...), a few hundred proposed and approved, 250 executing with their batches (some paused
by a user), each plan with its decisions; ten of the open plans are 10,000-move
reassignments (their content is megabytes, of which the queue reads only the schedule).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import statistics
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
from sqlalchemy import event, insert, update

from benchmarks.common import Figure, best_of

CLUSTERS = 200
PLANS = 5_000
EXECUTING = 250
BIG_PLANS = 10  # open plans of 10,000 moves
VISITS = 5
REFRESHES = 20
T0 = datetime(2026, 11, 1, tzinfo=UTC)
# state -> share of the plans not executing (the rest ended long ago)
SHARES = {"proposed": 0.06, "approved": 0.04, "completed": 0.6, "rejected": 0.08,
          "withdrawn": 0.05, "expired": 0.12, "failed": 0.03, "cancelled": 0.02}
USERS = ("olga", "omar", "otto", "anna", "arne", "ada")
# the page times its own refreshes: from the request of a refresh tick to its answer read
TIMER = """
if (!window.__refreshes) {
  window.__refreshes = [];
  const send = window.fetch;
  window.fetch = function (url, opts) {
    const body = opts && typeof opts.body === 'string' ? opts.body : '';
    if (!body.includes('"qu-refresh.n_intervals"')) { return send.apply(this, arguments); }
    const t0 = performance.now();
    return send.apply(this, arguments).then(r => r.clone().text().then(text => {
      window.__refreshes.push([performance.now() - t0, text.length]);
      return r;
    }));
  };
}
"""


def _moves(rng: np.random.Generator, n: int) -> dict:
    return {"version": 1, "partitions": [
        {"topic": f"topic-{int(t):04d}", "partition": int(p),
         "replicas": [int(b) for b in rng.choice(30, 3, replace=False)]}
        for t, p in zip(rng.integers(0, 500, n), rng.integers(0, 64, n), strict=True)]}


def fill(url: str) -> dict[str, list[int]]:
    """The fleet's plans, decisions, executions and their batches, written in bulk; the
    ids of the proposed plans (which the timing run approves one by one)."""
    from backend.store.schema import decisions, exec_batches, executions, plans
    from backend.store.store import open_store

    rng = np.random.default_rng(29)
    store = open_store(url)
    states = ["executing"] * EXECUTING
    for state, share in SHARES.items():
        states += [state] * round(share * (PLANS - EXECUTING))
    states = (states + ["completed"] * PLANS)[:PLANS]
    rng.shuffle(states)
    open_ids = [i for i, s in enumerate(states) if s in ("proposed", "approved")]
    big = set(rng.choice(open_ids, BIG_PLANS, replace=False).tolist())
    rows, made, runs, batches = [], [], [], []
    for i, state in enumerate(states):
        at = T0 + timedelta(minutes=10 * i)
        content = _moves(rng, 10_000 if i in big else int(rng.integers(5, 60)))
        if i % 7 == 0:
            content["not_before"] = (at + timedelta(hours=6)).isoformat()
        moved = int(rng.integers(1, 5_000)) * 10**6
        sha = hashlib.sha256(f"plan {i}".encode()).hexdigest()
        brokers = [{"id": b, "before": 900, "after": 905, "limit": 4000} for b in range(30)]
        rows.append({
            "id": i + 1, "kind": "reassignment", "cluster": f"cluster-{i % CLUSTERS:03d}",
            "title": f"rebalance {i}", "author": USERS[i % 3], "created_at": at,
            "expires_at": at + timedelta(days=400), "updated_at": at, "state": state,
            "content": content, "sha256": sha, "basis": {"partitions": []},
            "preview": {"replica_moves": len(content["partitions"]), "bytes_to_move": moved,
                        "eta_seconds": moved / 5e7, "batched_eta_seconds": moved / 4e7,
                        "brokers": brokers, "violations": []},
            "throttle": 50_000_000, "cancel_requested_at": None, "version": 2})
        if state not in ("proposed", "withdrawn", "expired"):
            made.append({"plan_id": i + 1, "user": USERS[3 + i % 3],
                         "decision": "reject" if state == "rejected" else "approve",
                         "comment": "", "sha256": sha, "at": at + timedelta(minutes=1)})
        if state == "executing":
            start = at.timestamp() + 120
            paused = len(runs) % 10 == 0
            runs.append({"plan_id": i + 1, "cluster": rows[-1]["cluster"],
                         "state": "paused" if paused else "running", "sha256": sha,
                         "throttle": 50_000_000, "batch": 1, "phase": "running",
                         "attempts": 0, "requested_by": "otto", "started_at": start,
                         "updated_at": start, "partitions_total": 40, "partitions_done": 10,
                         "bytes_total": moved, "bytes_done": moved // 4, "version": 3})
            for idx in range(4):
                batches.append({"plan_id": i + 1, "idx": idx, "partitions": 10,
                                "state": ("done", "running", "pending", "pending")[idx],
                                "done": (10, 3, 0, 0)[idx], "bytes_total": moved // 4,
                                "bytes_done": (moved // 4, moved // 10, 0, 0)[idx],
                                "started_at": start + 60 * idx if idx < 2 else None,
                                "ended_at": start + 60 if idx == 0 else None})
    with store.write() as conn:
        for chunk in range(0, len(rows), 500):
            conn.execute(insert(plans), rows[chunk:chunk + 500])
        conn.execute(insert(decisions), made)
        conn.execute(insert(executions), runs)
        conn.execute(insert(exec_batches), batches)
    for r in runs:
        if r["state"] == "paused":
            store.record(T0, {"user": "otto", "action": "execution_pause",
                              "plan_id": r["plan_id"]})
    if store.postgres:
        with store.write() as conn:  # the ids were given: move the sequence past them
            conn.exec_driver_sql("SELECT setval('plans_id_seq', (SELECT max(id) FROM plans))")
            conn.exec_driver_sql("ANALYZE")
    store.close()
    return {"proposed": [i + 1 for i, s in enumerate(states) if s == "proposed"]}


def _service(url: str) -> tuple[float, int, int]:
    """The service's best of 5 for the whole fleet, its rows and its statements."""
    from backend.services import plan_queue
    from backend.store.store import open_store
    from backend.store.workflow import Actor

    store = open_store(url)
    names = [f"cluster-{i:03d}" for i in range(CLUSTERS)]
    counted = []
    event.listen(store.engine, "before_cursor_execute", lambda *_: counted.append(1))
    try:
        who = Actor("anna", "approver")
        seconds, rows = best_of(lambda: plan_queue.queue(store, names, viewer=who), 5)
        statements = len(counted) // 5
    finally:
        store.close()
    return seconds, len(rows), statements


def _approver(url: str, proposed: list[int], halt: threading.Event) -> None:
    """One proposed plan approved every other second, as decisions arrive in a fleet."""
    from backend.store.schema import plans
    from backend.store.store import open_store

    store = open_store(url)
    try:
        for plan_id in proposed:
            if halt.wait(2.0):
                return
            with store.write() as conn:
                conn.execute(update(plans).where(plans.c.id == plan_id).values(
                    state="approved", version=plans.c.version + 1))
    finally:
        store.close()


def _browser(tmp: Path, url: str, proposed: list[int]) -> tuple[list[float], list[list]]:
    """First paints of /queue, and the page's refreshes: [seconds, answer characters]."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from benchmarks.bench_dashboard import _browser as chromium
    from tests.e2e.conftest import start_dashboard, stop

    clusters = [{"name": f"cluster-{i:03d}",
                 "gateway": {"type": "twin", "url": "http://127.0.0.1:9"}}
                for i in range(CLUSTERS)]
    dash = start_dashboard(tmp, {"clusters": clusters, "store": {"url": url},
                                 "server": {"refresh_seconds": 1}})
    driver = chromium()
    halt = threading.Event()
    try:
        paints = []
        for _ in range(VISITS + 1):  # the first visit warms the browser's static files
            driver.get("about:blank")
            t0 = time.perf_counter()
            driver.get(dash.url + "/queue")
            WebDriverWait(driver, 60, poll_frequency=0.01).until(
                lambda d: d.find_elements(By.CSS_SELECTOR, "#qu-grid .ag-row .ag-cell"))
            paints.append(time.perf_counter() - t0)
        count = driver.find_element(By.ID, "qu-count").text
        assert count.startswith(f"{PLANS:,} plans"), count
        driver.execute_script(TIMER)
        changer = threading.Thread(target=_approver, args=(url, proposed, halt))
        changer.start()
        WebDriverWait(driver, 120, poll_frequency=0.2).until(
            lambda d: len(d.execute_script("return window.__refreshes") or []) >= REFRESHES)
        refreshes = driver.execute_script("return window.__refreshes")[:REFRESHES]
    finally:
        halt.set()
        driver.quit()
        stop(dash.proc)
    return paints[1:], refreshes


def run() -> list[Figure]:
    from tests.servers import postgres_server

    server = postgres_server()
    try:
        url = next(server)
    except BaseException as e:
        print(f"   PostgreSQL not measured: {e}")
        return []
    try:
        t0 = time.perf_counter()
        proposed = fill(url)["proposed"]
        filled = time.perf_counter() - t0
        seconds, rows, statements = _service(url)
        load = "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
        figures = [Figure(
            "queue service, 200 clusters and 5,000 plans on PostgreSQL", seconds, "s", 0.3,
            note=f"{rows:,} rows in {statements} statements; best of 5; store filled in "
                 f"{filled:.1f} s; {load}")]
        if not (shutil.which("chromium") and shutil.which("chromedriver")):
            print("   browser figures not measured: chromium and chromedriver are missing")
            return figures
        with tempfile.TemporaryDirectory(prefix="railyard-bench-queue-") as tmp:
            paints, refreshes = _browser(Path(tmp), url, proposed)
    finally:
        server.close()
    load = "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    times = [t / 1000 for t, _ in refreshes]
    carried = sum(size > 200 for _, size in refreshes)
    figures.append(Figure(
        "/queue first paint, 200 clusters and 5,000 plans (median)", statistics.median(paints),
        "s", 2.0, note=f"open /queue -> the grid's rows drawn; runs "
                       f"{', '.join(f'{t:.2f}' for t in paints)} s; {load}"))
    figures.append(Figure(
        "/queue live refresh, 200 clusters and 5,000 plans (p95)",
        float(np.percentile(times, 95)), "s", 0.3,
        note=f"{len(times)} refreshes, {carried} carrying changed rows (one plan approved "
             f"every 2 s), the rest none; median {statistics.median(times) * 1000:.0f} ms; "
             f"{load}"))
    return figures
