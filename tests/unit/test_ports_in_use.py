"""A port already in use, for `railyard serve` and `railyard twin serve`: one line naming
the port, before anything is announced or started."""

from __future__ import annotations

import socket

import pytest

from backend.model.io import save_snapshot
from tests.unit.helpers import filled_snapshot, run_cli


@pytest.fixture
def taken():
    """A loopback port another socket listens on, for the test's length."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield s.getsockname()[1]


def test_serve_on_a_port_in_use_is_one_line_exit_3(tmp_path, capsys, taken):
    """It printed "Railyard dashboard on http://127.0.0.1:PORT", then a 73-line traceback
    ending in a Rust backtrace (Address already in use)."""
    config = tmp_path / "s.yaml"
    config.write_text("clusters:\n  - name: demo\n    gateway: {type: twin, url: "
                      f"'http://127.0.0.1:9'}}\nstore: {{url: 'sqlite:///{tmp_path}/r.db'}}\n"
                      f"cache: {{background_dir: '{tmp_path}/cache'}}\n")
    code, out, err = run_cli(capsys, "serve", "--config", config, "--port", taken,
                             "--no-warm-spark")
    assert code == 3 and out == "" and err.count("\n") == 1, err
    assert err.startswith(f"railyard serve: unavailable: Address 127.0.0.1:{taken}: cannot "
                          "listen there")
    assert "Railyard dashboard on" not in err


def test_twin_serve_names_the_api_port_in_use(tmp_path, capsys, taken):
    """It said "cannot listen on 127.0.0.1 from port 0" (the broker ports' base)."""
    snap = tmp_path / "s.json"
    save_snapshot(filled_snapshot({1: 1}), snap)
    code, out, err = run_cli(capsys, "twin", "serve", "--snapshot", snap, "--api-port", taken,
                             "--port-base", 0, "--for", 1, "--targets-file", tmp_path / "t.json")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert f"--api-port {taken}: cannot listen on 127.0.0.1:{taken}: " in err


def test_twin_serve_names_the_broker_ports_in_use(tmp_path, capsys, taken):
    snap = tmp_path / "s.json"
    save_snapshot(filled_snapshot({1: 1}), snap)
    code, out, err = run_cli(capsys, "twin", "serve", "--snapshot", snap, "--api-port", 0,
                             "--port-base", taken, "--for", 1,
                             "--targets-file", tmp_path / "t.json")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert f"--port-base {taken}: cannot listen on 127.0.0.1 from port {taken} to {taken}" in err
