"""The Prometheus Railyard starts serves queries and nothing that changes it: without
--web.enable-lifecycle, anything on the machine that can reach the port cannot stop or
reload it."""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest

from backend.metrics.server import PrometheusProcess

pytestmark = pytest.mark.integration


def post(url: str) -> int:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method="POST"), timeout=5) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def test_quit_and_reload_are_refused(tmp_path):
    prom = PrometheusProcess(tmp_path / "prom")
    prom.write_config({"global": {"scrape_interval": "1m"}, "scrape_configs": []})
    prom.start()
    try:
        assert post(f"{prom.url}/-/quit") == 403
        assert post(f"{prom.url}/-/reload") == 403
        with urllib.request.urlopen(f"{prom.url}/-/ready", timeout=5) as r:
            assert r.status == 200  # still serving
        assert prom.proc.poll() is None
    finally:
        prom.stop()


@pytest.mark.parametrize("dialect", ["strimzi", "confluent"])
def test_recording_rules_pass_promtool(tmp_path, dialect):
    """What `railyard prometheus rules` prints is a rule file Prometheus accepts."""
    import json
    import shutil
    import subprocess

    from backend.metrics.recording import RECORDED, recording_rules
    from backend.metrics.server import PROMTOOL

    if shutil.which(PROMTOOL) is None:
        pytest.skip("promtool is not installed (make install installs it)")
    path = tmp_path / "rules.yml"
    path.write_text(json.dumps(recording_rules(dialect)))
    done = subprocess.run([PROMTOOL, "check", "rules", str(path)], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"SUCCESS: {len(RECORDED)} rules found" in done.stdout
