"""The CLI contract: JSON on stdout, exit 0 for any computed answer, exit 2 and one line
on stderr for bad input, nothing written."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.unit.helpers import run_cli as run


def write(tmp_path, name, obj):
    path = tmp_path / name
    path.write_text(json.dumps(obj))
    return path


def snapshot_doc(counts):
    parts = [b for b, c in counts.items() for _ in range(c)]
    return {"cluster": "kip", "brokers": [{"id": b} for b in counts],
            "topics": [{"name": "fill", "partitions": [
                {"partition": i, "replicas": [b]} for i, b in enumerate(parts)]}]}


def test_create_topics_json(tmp_path, capsys):
    s = write(tmp_path, "s.json", snapshot_doc({1: 8, 2: 6, 3: 9}))
    code, out, _ = run(capsys, "limits", "create-topics", "--snapshot", s,
                       "--max-broker-partitions", 10, "--topic", "a:1:3", "--topic", "b:1:3",
                       "--start-index", 0)
    assert code == 0
    res = json.loads(out)
    assert res["ok"] is False and [t["ok"] for t in res["topics"]] == [True, False]
    assert res["topics"][0]["assignment"] == {"0": [1, 2, 3]}
    assert res["topics"][1]["assignment"] is None and "max.broker.partitions" in \
        res["topics"][1]["error"]
    assert set(res) >= {"broker_partitions_after", "capacity_after", "cluster_partitions_after"}


@pytest.mark.parametrize("args,message", [
    (["--topic", "a:1:4"], "topic 'a': replication factor: 4 larger than available brokers: 3"),
    (["--topic", "a:0:1"], "partitions must be larger than 0"),
    (["--topic", "a-1-1"], "expected NAME:PARTITIONS:RF"),
    (["--topic", "a:1:1", "--topic", "a:2:1"], "requested twice"),
    (["--topic", "a:1:1", "--max-broker-partitions", "-1"],
     "--max-broker-partitions: expected a positive whole number, got '-1'"),
])
def test_bad_input_is_one_line_exit_2(tmp_path, capsys, args, message):
    s = write(tmp_path, "s.json", snapshot_doc({1: 1, 2: 1, 3: 1}))
    code, out, err = run(capsys, "limits", "create-topics", "--snapshot", s, *args)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err


def test_argparse_errors_are_one_line(tmp_path):
    exe = Path(sys.executable).parent / "railyard"
    p = subprocess.run([exe, "limits", "create-topics",
                        "--snapshot", "x.json", "--topic", "a:1:1", "--max-partitions", "-3"],
                       capture_output=True, text=True)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.count("\n") == 1 and "--max-partitions" in p.stderr


def test_unknown_topic_and_plan_errors(tmp_path, capsys):
    s = write(tmp_path, "s.json", snapshot_doc({1: 1, 2: 1, 3: 1}))
    code, _, err = run(capsys, "limits", "add-partitions", "--snapshot", s, "--topic", "nope",
                       "--total", 3)
    assert code == 2 and "'nope' is not in cluster 'kip'" in err
    plan = write(tmp_path, "p.json", {"version": 1, "partitions": [
        {"topic": "fill", "partition": 0, "replicas": [1, 2]},
        {"topic": "fill", "partition": 0, "replicas": [3]}]})
    code, _, err = run(capsys, "limits", "check-reassignment", "--snapshot", s,
                       "--reassignment", plan)
    assert code == 2 and "fill-0: listed twice" in err and str(plan) in err


def test_mixed_racks_exit_2(tmp_path, capsys):
    doc = snapshot_doc({1: 1, 2: 1})
    doc["brokers"][0]["rack"] = "a"
    s = write(tmp_path, "s.json", doc)
    code, _, err = run(capsys, "limits", "create-topics", "--snapshot", s, "--topic", "t:1:1")
    assert code == 2 and "rack" in err


def test_snapshot_generate_describe_import(tmp_path, capsys):
    out_file = tmp_path / "g.json"
    code, out, _ = run(capsys, "snapshot", "generate", "--brokers", 5, "--racks", 0, "--topics",
                       3, "--partitions", 20, "--rf", 2, "--seed", 1, "--out", out_file)
    assert code == 0 and json.loads(out)["replicas"] == 40
    code, out, _ = run(capsys, "snapshot", "describe", out_file)
    assert sum(b["replicas"] for b in json.loads(out)["brokers"]) == 40
    plan = write(tmp_path, "current.json", {"version": 1, "partitions": [
        {"topic": "x", "partition": 0, "replicas": [4, 7]},
        {"topic": "x", "partition": 1, "replicas": [7, 9], "log_dirs": ["any", "any"]}]})
    code, out, _ = run(capsys, "snapshot", "import-assignment", "--assignment", plan,
                       "--out", tmp_path / "i.json")
    assert code == 0 and json.loads(out)["brokers"] == 3
    code, out, _ = run(capsys, "snapshot", "describe", tmp_path / "i.json")
    assert [b["replicas"] for b in json.loads(out)["brokers"]] == [1, 2, 1]


@pytest.mark.parametrize(("out", "message"), [
    ("s.txt", "s.txt: expected a .json or .parquet file name"),
    ("file/s.json", "/file is not a directory"),  # its parent is a file
])
def test_snapshot_out_that_cannot_be_written_is_one_line(tmp_path, capsys, out, message):
    (tmp_path / "file").write_text("not a folder")
    code, stdout, err = run(capsys, "snapshot", "generate", "--brokers", 3, "--racks", 1,
                            "--topics", 2, "--partitions", 6, "--rf", 3, "--seed", 1,
                            "--out", tmp_path / out)
    assert code == 2 and stdout == ""
    assert err.count("\n") == 1 and message in err
    assert not (tmp_path / "s.txt").exists()
