"""Railyard against a Prometheus that asks for credentials (its own --web.config.file with
basic_auth_users, as behind a hosted or shared Prometheus): the config's basic_auth, its
password from a file, reaches Prometheus through the runtime's cluster source as the
Authorization header, and the pages' client reads; without it, or with a wrong password,
the client says Prometheus refused Railyard, one line, naming neither password."""

from __future__ import annotations

import base64
import json
import subprocess
import urllib.request
from pathlib import Path

import pytest
import yaml

from backend.metrics.client import PrometheusUnavailable
from backend.metrics.server import PROMETHEUS
from backend.services import monitoring
from dashboard.config import parse_config
from dashboard.runtime import Runtime
from tests.servers import free_port, poll, stop

pytestmark = pytest.mark.integration
USER, PASSWORD = "railyard", "s3cret-pw"
# bcrypt of PASSWORD, as Prometheus' web config wants it (made once with Python's crypt
# module: crypt.crypt(PASSWORD, crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16)))
HASH = "$2b$04$zz.DmQVXFjm3eu46qxN98eWMxy9yqTP1cokHk2TLxbvLJ5GU3JNcG"


def _scraped(url: str, proc: subprocess.Popen, log: Path) -> None:
    """Prometheus has scraped itself once: ``up`` answers to the right credentials."""
    token = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    request = urllib.request.Request(f"{url}/api/v1/query?query=up",
                                     headers={"Authorization": f"Basic {token}"})

    def answered() -> bool:
        with urllib.request.urlopen(request, timeout=1) as r:
            return bool(json.load(r)["data"]["result"])

    poll(answered, proc, log, 30, f"prometheus at {url}")


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory):
    """A Prometheus behind basic auth that scrapes itself as broker 1 (so `up` answers)."""
    tmp = tmp_path_factory.mktemp("prom-auth")
    port = free_port()
    (tmp / "web.yml").write_text(yaml.safe_dump({"basic_auth_users": {USER: HASH}}))
    (tmp / "pw").write_text(PASSWORD + "\n")
    (tmp / "prometheus.yml").write_text(yaml.safe_dump({
        "global": {"scrape_interval": "1s"},
        "scrape_configs": [{"job_name": "self", "basic_auth": {
            "username": USER, "password_file": str(tmp / "pw")},
            "static_configs": [{"targets": [f"127.0.0.1:{port}"],
                                "labels": {"broker": "1"}}]}]}))
    log = tmp / "prometheus.log"
    proc = subprocess.Popen(
        [PROMETHEUS, f"--config.file={tmp / 'prometheus.yml'}",
         f"--web.config.file={tmp / 'web.yml'}", f"--storage.tsdb.path={tmp / 'data'}",
         f"--web.listen-address=127.0.0.1:{port}"],
        stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        _scraped(url, proc, log)
        yield url, tmp / "pw"
    finally:
        stop(proc)


def client(url: str, prom_extra: dict, tmp_path):
    """The pages' client for a cluster configured with ``prom_extra``, through the runtime."""
    doc = {"clusters": [{"name": "a", "gateway": {"type": "twin", "url": "http://127.0.0.1:1"},
                         "prometheus": {"url": url, **prom_extra}}],
           "store": {"url": f"sqlite:///{tmp_path / 'r.db'}"}}
    return monitoring.metrics_client(Runtime(parse_config(doc, "cfg"), cache=None).source("a"))


def test_basic_auth_from_the_config_reads_a_prometheus_that_asks_for_it(prometheus, tmp_path):
    url, pw = prometheus
    metrics = client(url, {"basic_auth": {"username": USER, "password": {"file": str(pw)}}},
                     tmp_path)
    frame = metrics.instant("brokers_up")
    assert frame["broker"].tolist() == ["1"] and frame["value"].tolist() == [1.0]


@pytest.mark.parametrize("password", [None, "wrong-pw"])
def test_without_the_right_credentials_prometheus_refusing_railyard_is_said(
        prometheus, tmp_path, password):
    url, _ = prometheus
    extra = {}
    if password is not None:
        (tmp_path / "wrong").write_text(password)
        extra = {"basic_auth": {"username": USER, "password": {"file": str(tmp_path / "wrong")}}}
    with pytest.raises(PrometheusUnavailable) as e:
        client(url, extra, tmp_path).instant("brokers_up")
    assert str(e.value) == (f"Prometheus at {url} refused Railyard (HTTP 401): check the "
                            "cluster's prometheus basic_auth or bearer_token")
    assert PASSWORD not in str(e.value) and "wrong-pw" not in str(e.value)
