"""`railyard throttle plan`: the issue's JSON keys, and bad input as exit 2 with one line."""

import json

import pytest

from tests.unit.helpers import run_cli as run

REQUIRED = {"leader_throttled_replicas", "follower_throttled_replicas", "throttled_brokers",
            "move_ratio", "bytes_to_move", "brokers", "eta_seconds", "kip73_move_time_seconds",
            "max_fetch_response_bytes", "fetch_response_ok", "suggested_throttle"}
BROKER_KEYS = {"id", "bytes_in", "bytes_out", "client_bytes_in_per_sec", "eta_seconds",
               "in_safe_band", "diagnosis"}


@pytest.fixture
def files(tmp_path):
    snap = {"cluster": "c", "brokers": [{"id": b} for b in (101, 102, 103)],
            "topics": [{"name": "my-topic", "partitions": [
                {"partition": 0, "replicas": [101, 102], "size_bytes": 10**9,
                 "bytes_in_per_sec": 1e6}]}]}
    plan = {"version": 1, "partitions": [
        {"topic": "my-topic", "partition": 0, "replicas": [102, 103]}]}
    paths = {}
    for name, obj in (("snap.json", snap), ("plan.json", plan)):
        paths[name] = tmp_path / name
        paths[name].write_text(json.dumps(obj))
    return paths


def plan_args(files, *extra):
    return ("throttle", "plan", "--snapshot", files["snap.json"],
            "--reassignment", files["plan.json"], *extra)


def test_plan_prints_the_issue_keys(files, capsys):
    code, out, err = run(capsys, *plan_args(files, "--throttle", 50_000_000,
                                            "--network-capacity", 125e6,
                                            "--fetch-response-max-bytes", 1048576,
                                            "--window-num", 11, "--window-seconds", 1))
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert doc.keys() >= REQUIRED
    assert all(b.keys() >= BROKER_KEYS for b in doc["brokers"])
    assert doc["leader_throttled_replicas"] == {"my-topic": "0:101,0:102"}
    assert doc["follower_throttled_replicas"] == {"my-topic": "0:103"}
    assert doc["throttled_brokers"] == [101, 102, 103]
    assert doc["eta_seconds"] == pytest.approx(1e9 / (50e6 - 1e6))
    assert doc["fetch_response_ok"] is True


def bad(capsys, *args):
    code, out, err = run(capsys, *args)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    return err


@pytest.mark.parametrize("throttle", ["0", "-1", "fast"])
def test_bad_throttle(files, capsys, throttle):
    assert "--throttle" in bad(capsys, *plan_args(files, "--throttle", throttle))


@pytest.mark.parametrize("flag", ["--network-capacity", "--fetch-response-max-bytes",
                                  "--window-num", "--window-seconds"])
def test_bad_positive_flags(files, capsys, flag):
    assert flag in bad(capsys, *plan_args(files, "--throttle", 1000, flag, "0"))


@pytest.mark.parametrize("entry,message", [
    ({"topic": "nope", "partition": 0, "replicas": [101]}, "topic 'nope'"),
    ({"topic": "my-topic", "partition": 0, "replicas": [101, 999]}, "broker 999"),
    ({"topic": "my-topic", "partition": 5, "replicas": [101]}, "my-topic-5"),
    ({"topic": "my-topic", "partition": 0, "replicas": []}, "replicas"),
])
def test_bad_plan(files, capsys, entry, message):
    files["plan.json"].write_text(json.dumps({"version": 1, "partitions": [entry]}))
    assert message in bad(capsys, *plan_args(files, "--throttle", 1000))


def test_missing_files(files, capsys, tmp_path):
    err = bad(capsys, "throttle", "plan", "--snapshot", tmp_path / "none.json",
              "--reassignment", files["plan.json"], "--throttle", 1000)
    assert "none.json" in err
    err = bad(capsys, "throttle", "plan", "--snapshot", files["snap.json"],
              "--reassignment", tmp_path / "gone.json", "--throttle", 1000)
    assert "gone.json" in err
