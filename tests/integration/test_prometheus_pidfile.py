"""`railyard prometheus up` after its Prometheus was killed (issue 27 item 11): the pid file
it left names a dead process, or one the kernel has since given to another program. `up`
starts anyway, and `down` never signals that other program."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

RAILYARD = [sys.executable, "-c", "import sys; from backend.cli import main; sys.exit(main())"]


def railyard(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*RAILYARD, *args], capture_output=True, text=True, timeout=90)


def up(home: Path, targets: Path) -> subprocess.CompletedProcess:
    return railyard("prometheus", "up", "--port", "0", "--home", str(home),
                    "--targets-file", str(targets))


def gone(pid: int, timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
            return True  # exited; its parent has not reaped it yet
        time.sleep(0.1)
    return False


@pytest.fixture
def targets(tmp_path) -> Path:
    path = tmp_path / "targets.json"
    path.write_text(json.dumps({"cluster": "t", "targets": {"1": "127.0.0.1:9"}}))
    return path


def test_up_starts_after_its_prometheus_was_killed(tmp_path, targets):
    home = tmp_path / "prom"
    first = up(home, targets)
    assert first.returncode == 0, first.stderr
    pid = json.loads(first.stdout)["pid"]
    try:
        os.kill(pid, signal.SIGKILL)
        assert gone(pid)
        again = up(home, targets)
        assert again.returncode == 0, again.stderr
        assert json.loads(again.stdout)["pid"] != pid
        refused = up(home, targets)  # this one runs: a second `up` is refused
        assert refused.returncode == 2 and "already running" in refused.stderr
    finally:
        down = railyard("prometheus", "down", "--home", str(home))
    assert json.loads(down.stdout)["stopped"] is True
    assert not (home / "prometheus.pid").exists()


def test_a_pid_reused_by_another_program_is_not_ours(tmp_path, targets):
    home = tmp_path / "prom"
    home.mkdir()
    stranger = subprocess.Popen(["sleep", "120"])
    try:
        # the pid file of a Prometheus that died, whose pid `sleep` now has
        (home / "prometheus.pid").write_text(f"{stranger.pid} 9090 1\n")
        quiet = railyard("prometheus", "down", "--home", str(home))
        assert json.loads(quiet.stdout)["stopped"] is False
        assert stranger.poll() is None  # never signalled
        (home / "prometheus.pid").write_text(f"{stranger.pid} 9090 1\n")
        started = up(home, targets)
        assert started.returncode == 0, started.stderr
        down = railyard("prometheus", "down", "--home", str(home))
        assert json.loads(down.stdout) == {"stopped": True,
                                           "pid": json.loads(started.stdout)["pid"]}
        assert stranger.poll() is None
    finally:
        stranger.kill()
        stranger.wait()
