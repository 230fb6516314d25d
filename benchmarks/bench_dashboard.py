"""Dashboard speed from a headless browser: first load of / and a time-range change.

Targets (issue 7): first load of / at most 2 s; a time-range change at most 300 ms
(p95 of 20), on the demo cluster and on a 100-broker, 200k-partition cluster. The
server runs as `railyard serve` in a subprocess; the browser is headless chromium.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from backend.model.generate import generate_snapshot
from backend.model.io import save_snapshot
from backend.model.snapshot import Limits
from backend.services.demo import demo_snapshot
from benchmarks.common import Figure

CHANGES = 20


def _browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    from tests.e2e.conftest import CHROMIUM_FLAGS

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)


def _bars_rendered(driver) -> bool:
    from selenium.webdriver.common.by import By

    return bool(driver.find_elements(By.CSS_SELECTOR, "#ov-broker-bars g.point"))


def _measure(driver, url: str) -> tuple[float, list[float]]:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(url + "/?range=live")  # warm the server's caches once, as an operator's
    WebDriverWait(driver, 60).until(_bars_rendered)  # second visit would find them
    driver.get("about:blank")
    t0 = time.perf_counter()
    driver.get(url + "/")
    WebDriverWait(driver, 30, poll_frequency=0.01).until(_bars_rendered)
    first = time.perf_counter() - t0
    changes = []
    for i in range(CHANGES):
        old = driver.find_element(By.CSS_SELECTOR, "#ov-broker-bars g.point")
        key = ("1h", "6h")[i % 2]
        t0 = time.perf_counter()
        driver.find_element(By.CSS_SELECTOR, f"#range input[value='{key}']").click()

        def redrawn(d, old=old, key=key):
            try:
                old.is_displayed()
                return False
            except StaleElementReferenceException:
                return f"range={key}" in d.current_url and _bars_rendered(d)

        WebDriverWait(driver, 30, poll_frequency=0.005).until(redrawn)
        changes.append(time.perf_counter() - t0)
    return first, changes


def _cluster(tmp: Path, name: str, snap) -> dict:
    path = tmp / f"{name}.parquet"
    save_snapshot(snap, path)
    return {"name": name, "gateway": {"type": "twin", "url": "http://127.0.0.1:9"},
            "snapshot": str(path)}


def run() -> list[Figure]:
    if not (shutil.which("chromium") and shutil.which("chromedriver")):
        return []
    from tests.e2e.conftest import start_dashboard, stop

    big = generate_snapshot(100, 10, 2000, 200_000, 3, seed=7, cluster="big")
    big = big.with_limits(Limits(max_broker_partitions=7000, max_partitions=1_000_000))
    figures = []
    with tempfile.TemporaryDirectory(prefix="railyard-bench-") as tmp:
        for label, snap in (("demo", demo_snapshot()), ("100 brokers/200k", big)):
            work = Path(tmp) / snap.cluster
            work.mkdir()
            dash = start_dashboard(work, {"clusters": [_cluster(work, snap.cluster, snap)]})
            driver = _browser()
            try:
                first, changes = _measure(driver, dash.url)
            finally:
                driver.quit()
                stop(dash.proc)
            note = "overview: partitions per broker from the assignment (no Prometheus)"
            figures += [
                Figure(f"dashboard first load of / ({label})", first, "s", 2.0, note=note),
                Figure(f"dashboard time-range change p95 of {CHANGES} ({label})",
                       float(np.percentile(changes, 95)) * 1000, "ms", 300.0, note=note),
            ]
    return figures
