"""A second `make demo` found the first one's plan still executing: its cluster (the twin,
or the demo's own Kafka) had started anew, yet the executor resumed the plan, put the old
cluster's throttles back on the new one and failed it ("topic-000-1 is not at its
target"), and plans piled up run after run. The demo's plan store now starts anew with
its cluster; the last one is set aside whole, its audit chain still verifiable."""

from __future__ import annotations

import json
import os
import signal
import socket

import pytest

from backend.errors import BadInput
from backend.metrics.server import PrometheusProcess
from backend.services import plans
from backend.spark import session
from backend.store.store import open_store
from dashboard.demo_stack import (
    DemoSettings,
    DemoStack,
    demo_store,
    lock_home,
    set_aside_store,
)
from tests.unit.helpers import run_cli
from tests.unit.test_audit_cli import approved_plan


def test_a_new_demo_starts_with_a_new_store_and_keeps_the_last_one_aside(tmp_path, capsys):
    home = tmp_path / "demo"
    home.mkdir()
    assert set_aside_store(home) is None  # the first start: nothing to set aside
    s = demo_store(home)
    store = open_store(s.url, key_file=s.audit_key_file, checkpoints=s.audit_checkpoints)
    plan = approved_plan(store)
    store.close()

    aside = set_aside_store(home)
    assert aside == home / "previous"
    assert not (home / "railyard.db").exists()
    assert not (home / "audit-checkpoints.jsonl").exists()
    fresh = open_store(s.url, key_file=s.audit_key_file, checkpoints=s.audit_checkpoints)
    assert plans.list_plans(fresh, cluster="c1", limit=10) == []
    fresh.close()
    old = demo_store(aside)
    kept = open_store(old.url, key_file=old.audit_key_file, checkpoints=old.audit_checkpoints)
    [again] = plans.list_plans(kept, cluster="c1", limit=10)
    assert (again.id, again.state) == (plan.id, "approved")
    kept.close()
    code, out, err = run_cli(capsys, "audit", "verify", "--demo", aside)
    assert code == 0 and json.loads(out)["intact"] and json.loads(out)["rows"] == 3, err

    set_aside_store(home)  # the demo after: its (new) store replaces the one aside
    gone = open_store(old.url, key_file=old.audit_key_file, checkpoints=old.audit_checkpoints)
    assert plans.list_plans(gone, cluster="c1", limit=10) == []
    gone.close()


def test_a_second_demo_on_the_same_home_or_ports_is_refused_before_it_touches_anything(
        tmp_path):
    """A second `railyard demo` in another terminal wiped the first one's Prometheus data,
    found the first one's Prometheus answering on 9090 and took it for its own, set the
    first one's plan store aside while it ran, and ended in a traceback on port 8050."""
    home = tmp_path / "demo"
    home.mkdir()
    first = lock_home(home)
    with pytest.raises(BadInput, match=f"another railyard demo runs in {home}: .*nothing "
                                       "was started"):
        lock_home(home)
    os.close(first)
    os.close(lock_home(home))  # the lock ends with its holder

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        stack = DemoStack(DemoSettings(home=home, port=port, warm_spark=False))
        with pytest.raises(BadInput, match=f"--port {port}: 127.0.0.1:{port} is in use"):
            stack.start(print)
        assert not stack.running()
        stack.stop(print)  # releases the home
        os.close(lock_home(home))
        with pytest.raises(BadInput, match=f"127.0.0.1:{port} is in use: another "
                                           "Prometheus"):
            PrometheusProcess(tmp_path / "prom", port).start()
        assert not (tmp_path / "prom" / "data").exists()  # nothing of it was touched


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("flag", ["--port", "--prometheus-port"])
@pytest.mark.parametrize("made", [False, True], ids=["new-home", "empty-home"])
def test_a_demo_refused_for_a_port_in_use_leaves_nothing_in_its_home(
        tmp_path, capsys, monkeypatch, flag, made):
    """`railyard demo --home DIR` with its port taken left an empty DIR/demo.lock behind
    (in a DIR it had made); with --prometheus-port taken it had started the twin and
    written its files first. Refused before the home is made or locked, it leaves
    nothing, and the next demo there takes the home."""
    home = tmp_path / "demo"
    if made:
        home.mkdir()
    saved = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    monkeypatch.setattr(session, "stop_session", lambda: False)  # no session of the suite's
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        ports = {"--port": port, "--prometheus-port": free_port()} if flag == "--port" \
            else {"--port": free_port(), "--prometheus-port": port}
        try:
            code, out, err = run_cli(capsys, "demo", "--home", home, "--no-warm-spark",
                                     *(str(x) for kv in ports.items() for x in kv))
        finally:
            for sig, handler in saved.items():
                signal.signal(sig, handler)
    assert code == 2 and out == "", err
    [line] = err.splitlines()
    assert f"{flag} {port}: 127.0.0.1:{port} is in use (another " in line
    assert line.endswith("; nothing was started"), line
    assert (list(home.iterdir()) == []) if made else not home.exists()
    home.mkdir(exist_ok=True)
    os.close(lock_home(home))  # the next demo there takes the home
