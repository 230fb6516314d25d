"""Debian's Prometheus scraping the session's Apache Kafka brokers (their JMX exporters,
through deploy/jmx-exporter/kafka-broker.yaml) every two seconds, with Railyard's recording rules
as the app writes them; and polling with a deadline."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from backend.metrics.client import MetricsError
from backend.metrics.recording import RULES_FILE
from backend.metrics.server import PrometheusProcess

SCRAPE_SECONDS = 2.0  # a JMX exporter scrape of a broker on a busy 2-core machine can take
# over a second: a shorter scrape timeout loses whole scrapes


def kafka_prometheus(kafka_cluster: Any, home: Path) -> Iterator[PrometheusProcess]:
    """Prometheus reading the cluster's file_sd targets (labels broker, rack, cluster)."""
    every = f"{round(SCRAPE_SECONDS * 1000)}ms"
    config = {
        "global": {"scrape_interval": every, "scrape_timeout": every,
                   "evaluation_interval": every},
        "rule_files": [RULES_FILE],
        "scrape_configs": [{"job_name": "kafka", "file_sd_configs": [
            {"files": [kafka_cluster.describe()["targets_file"]], "refresh_interval": "5s"}]}],
    }
    prom = PrometheusProcess(home)
    prom.write_config(config, "strimzi", rules_interval=SCRAPE_SECONDS)
    prom.start()
    try:
        yield prom
    finally:
        prom.stop()


def poll(what: str, ask: Callable[[], Any], ok: Callable[[Any], bool],
         timeout: float = 90.0) -> Any:
    """``ask()`` until ``ok`` holds for its answer (metrics errors count as not yet);
    AssertionError with the last answer after ``timeout`` seconds."""
    deadline, last = time.monotonic() + timeout, None
    while True:
        try:
            last = ask()
            if ok(last):
                return last
        except MetricsError as e:
            last = e
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not met within {timeout:g} s; last answer: {last}")
        time.sleep(0.5)
