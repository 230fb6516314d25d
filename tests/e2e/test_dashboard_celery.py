"""With cache.type redis, sweeps go through Celery: a real redis-server on loopback, a
`railyard worker` that owns the Spark session, and the dashboard that owns none."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from selenium.webdriver.common.by import By

from backend.model.io import save_snapshot
from backend.twin.examples import demo_snapshot
from tests.e2e.conftest import console_errors, start_dashboard, stop
from tests.e2e.test_dashboard_browser import cancel_a_long_sweep, type_into, wait_for, wait_text
from tests.servers import redis_server

pytestmark = pytest.mark.e2e
redis_url = pytest.fixture(scope="module")(redis_server)


@pytest.fixture(scope="module")
def celery_dashboard(tmp_path_factory, redis_url):
    tmp: Path = tmp_path_factory.mktemp("celery")
    save_snapshot(demo_snapshot(), tmp / "demo.parquet")
    config = {"clusters": [
        {"name": "demo", "gateway": {"type": "twin", "url": "http://127.0.0.1:9"},
         "snapshot": str(tmp / "demo.parquet"),
         "prometheus": {"url": "http://127.0.0.1:9", "dialect": "strimzi"}}],
        "spark": {"master": "local[1]"}, "cache": {"type": "redis", "redis_url": redis_url}}
    d = start_dashboard(tmp, config, warm_spark=False)
    log = tmp / "worker.log"
    worker = subprocess.Popen(
        [str(Path(sys.executable).parent / "railyard"), "worker", "--config",
         str(tmp / "railyard.yaml"), "--concurrency", "2"],
        stdout=log.open("w"), stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 90
        while "ready." not in log.read_text():
            assert worker.poll() is None, log.read_text()[-2000:]
            assert time.monotonic() < deadline, log.read_text()[-2000:]
            time.sleep(0.5)
        d.worker, d.worker_log = worker, log
        yield d
    finally:
        stop(worker)
        stop(d.proc)


def java_children(pid: int) -> list[str]:
    return [p.name() for p in psutil.Process(pid).children(recursive=True)
            if p.name() == "java"]


def test_sweep_runs_on_the_celery_worker(browser, celery_dashboard):
    d = celery_dashboard
    browser.get("about:blank")  # the last module's page stops polling its stopped server
    console_errors(browser)
    browser.get(d.url + "/what-if?tab=sweeps")
    grid = wait_for(browser, "#wi-sw-grid")
    type_into(grid, "max.broker.partitions=11000,12000,13000;add_brokers=0,1")
    browser.find_element(By.ID, "wi-sw-run").click()
    wait_text(browser, "#wi-sw-result", "6 rows in", timeout=120)
    wait_for(browser, "#wi-sw-table .ag-row")
    assert "succeeded" in d.worker_log.read_text()
    # the worker owns the Spark JVM; the dashboard process started none
    assert java_children(d.worker.pid) and not java_children(d.proc.pid)
    assert console_errors(browser) == []


def test_cancel_reaches_the_worker(browser, celery_dashboard):
    cancel_a_long_sweep(browser, celery_dashboard.url)  # the flag reached it through Redis
