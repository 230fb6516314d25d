"""`railyard capacity forecast` on the command line: knobs refused in one line before any
source is asked, and an unreachable gateway never read as "no limit in sight"."""

from __future__ import annotations

import json
import socket

import numpy as np
import pytest

from backend.services import capacity
from tests.unit.helpers import run_cli

END = 1_700_000_000.0


def history(source, days, end=None):
    """Two brokers' daily peaks growing for ``days`` (capacity.history, without Prometheus)."""
    times = END - np.arange(days)[::-1] * 86_400.0
    values = np.vstack([np.linspace(100, 160, days), np.linspace(90, 150, days)])
    return {"times": times, "brokers": ["1", "2"], "broker_values": values,
            "cluster_values": values.sum(0), "start": times[0], "end": END,
            "prometheus": "http://127.0.0.1:1", "dialect": "strimzi"}


@pytest.fixture
def config(tmp_path, monkeypatch):
    """A config whose cluster's gateway does not answer, and Prometheus history faked."""
    monkeypatch.setattr(capacity, "history", history)
    with socket.socket() as s:  # a loopback port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    path = tmp_path / "c.yaml"
    path.write_text(f"clusters:\n  - name: demo\n    gateway:\n      type: twin\n"
                    f"      url: http://127.0.0.1:{port}\n"
                    f"    prometheus:\n      url: http://127.0.0.1:{port}\n")
    return path


def test_an_unreachable_gateway_and_no_limits_is_exit_3_naming_it(config, capsys):
    """It exited 0 with empty limits, an empty table and 0 brokers to add."""
    code, out, err = run_cli(capsys, "capacity", "forecast", "--config", config)
    assert code == 3 and out == "" and err.count("\n") == 1
    assert "unavailable: Twin at http://127.0.0.1:" in err and "needs the cluster's limits" in err


def test_with_limits_given_the_forecast_runs_and_says_what_it_lacked(config, capsys):
    code, out, err = run_cli(capsys, "capacity", "forecast", "--config", config,
                             "--max-broker-partitions", 200)
    answer = json.loads(out)
    assert code == 0 and err == ""
    assert answer["warning"].startswith("the cluster's assignment was not read (Twin at")
    assert answer["table"] and answer["brokers_to_add"]["likely"]["brokers_to_add"] == 2


@pytest.mark.parametrize("args,message", [
    (["--growth-pct-month", "1e308"], "--growth-pct-month: give a number from 0 to 1000"),
    (["--growth-pct-month", "-500"], "--growth-pct-month: give a number from 0 to 1000"),
    (["--growth-pct-month", "-20"], "--growth-pct-month: give a number from 0 to 1000 (% a "
                                    "month), got -20"),
    (["--topic", "1000000000:3"],
     "--topic '1000000000:3': partition count 1000000000 is more than the 5,000,000"),
    (["--topic", "10:40000"], "replication factor 40000 is more than"),
])
def test_knobs_out_of_range_are_one_line(config, capsys, args, message):
    """1e308 was an OverflowError traceback, -500 was accepted, 1e9 partitions ran the
    machine out of memory."""
    code, out, err = run_cli(capsys, "capacity", "forecast", "--config", config, *args)
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err


def test_the_page_refuses_a_planned_topic_past_the_bound_too():
    from backend.errors import BadInput
    from backend.services import capacity_view
    # in the planned-topic field's one shape (it read "topic '6000000:1': partition count
    # ...", as if 6000000:1 were a topic's name)
    with pytest.raises(BadInput, match=r"^planned topic: expected at most 5,000,000 "
                                       r"partitions, got '6000000:1'$"):
        capacity_view.parse_view({"topic": "6000000:1"})


def test_a_planned_topic_wider_than_the_cluster_names_the_field(config, capsys):
    """Read without the assignment, the history's two brokers are the cluster: RF 3 said
    "replication factor: 3 larger than available brokers: 2", naming no field."""
    code, out, err = run_cli(capsys, "capacity", "forecast", "--config", config,
                             "--max-broker-partitions", 200, "--topic", "10:3")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert ("planned topic: expected a replication factor of at most 2, the brokers the "
            "cluster has, got '10:3'") in err
