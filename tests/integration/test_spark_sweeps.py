"""What-if sweeps on three real Sparks: embedded local mode, a standalone master and worker
started from the pyspark package, and a Spark Connect server, all on 127.0.0.1.

Every kind's rows are checked against the single-scenario CLI verb for the same inputs,
and the same sweep must return the same rows on all three. One session per backend; the
fixtures stop every server they start.
"""

from __future__ import annotations

import contextlib
import io
import json
import threading

import numpy as np
import pytest

from backend.cli import main
from backend.engines.batches import execution_batches
from backend.engines.throttle import DEFAULT_NETWORK_CAPACITY, batched_eta_seconds
from backend.errors import BadInput
from backend.model.io import save_snapshot
from backend.model.reassignment import reassignment_between
from backend.model.snapshot import Limits
from backend.services import whatif
from backend.spark.session import get_session, settings_from, stop_session
from backend.spark.spec import parse_spec
from backend.spark.sweeps import SweepCancelled, with_brokers_added
from backend.twin.generate import generate_snapshot
from tests import spark_servers

pytestmark = [pytest.mark.integration,
              pytest.mark.filterwarnings("ignore:PySpark does not yet fully support pandas")]

WORKLOAD = [{"topic": "orders", "partitions": 30, "rf": 3},
            {"topic": "clicks", "partitions": 60, "rf": 3}]


def cli(*args) -> dict:
    """What `railyard ...` prints, run in this process."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([str(a) for a in args]) == 0
    return json.loads(out.getvalue())


# ---- inputs -----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("sweep-inputs")
    snap = generate_snapshot(6, 3, 20, 300, 3, seed=3)
    save_snapshot(snap, d / "small.json")
    # a plan moving 60 partitions: every replica one broker position on
    rows = np.arange(60)
    after = snap.with_replicas(rows, snap.replica_offsets[:61],
                               (snap.replica_broker[: snap.replica_offsets[60]] + 1) % 6)
    plan = reassignment_between(snap, after)
    (d / "plan.json").write_text(json.dumps(plan.to_kafka_json(snap)))
    rng = np.random.default_rng(7)
    lines = []
    for i in range(240):
        lines.append(json.dumps({
            "t": round(i * 0.25, 3), "user": ["alice", "bob", "carol"][int(rng.integers(3))],
            "client_id": ["app1", "app2"][int(rng.integers(2))], "op": "create_topics",
            "partitions": int(rng.integers(1, 25)), "validate_only": bool(rng.random() < 0.1)}))
    (d / "requests.jsonl").write_text("\n".join(lines) + "\n")
    limited = Limits(max_broker_partitions=200)
    save_snapshot(generate_snapshot(5, 0, 10, 200, 3, seed=1, cluster="east", limits=limited),
                  d / "east-1.json")
    save_snapshot(generate_snapshot(6, 0, 10, 260, 3, seed=2, cluster="east", limits=limited),
                  d / "east-2.parquet")
    save_snapshot(generate_snapshot(4, 2, 8, 120, 2, seed=4, cluster="west"),
                  d / "west.json")
    return d


@pytest.fixture(scope="module")
def specs(files):
    return {
        "limits": {"kind": "limits", "snapshot": str(files / "small.json"), "detail": True,
                   "workload": WORKLOAD,
                   "grid": {"max.broker.partitions": [150, 165, None],
                            "add_brokers": [0, 2]}},
        "throttle": {"kind": "throttle", "snapshot": str(files / "small.json"),
                     "reassignment": str(files / "plan.json"), "detail": True,
                     "grid": {"throttle": [1_000_000, 60_000_000, 150_000_000],
                              "window_num": [11, 30]}},
        "quota": {"kind": "quota", "requests": str(files / "requests.jsonl"),
                  "grid": {"rate": [2, 10], "samples": [5, 11]}, "mode": "strict"},
        "fleet": {"kind": "fleet", "clusters": [
            {"name": "east", "snapshots": [
                {"file": str(files / "east-1.json"), "taken_at": "2025-01-01T00:00:00Z"},
                {"file": str(files / "east-2.parquet"), "taken_at": "2025-01-11T00:00:00Z"}]},
            {"name": "west", "snapshots": [str(files / "west.json")], "growth_per_day": 4}],
            "grid": {"max.broker.partitions": ["snapshot", 150]}},
    }


# ---- the three Sparks ---------------------------------------------------------------------
@pytest.fixture(scope="module", params=["local", "standalone", "connect"])
def backend(request, tmp_path_factory):
    """(name, settings) with the shared session started; everything stopped afterwards."""
    work = tmp_path_factory.mktemp(f"spark-{request.param}")
    with contextlib.ExitStack() as stack:
        if request.param == "local":
            settings = settings_from(master="local[2]")
        elif request.param == "standalone":
            url = stack.enter_context(spark_servers.standalone_cluster(work, cores=2))
            settings = settings_from(master=url, config={"conf": {
                "spark.executor.memory": "768m", "spark.cores.max": "2"}})
        else:
            settings = settings_from(remote=stack.enter_context(
                spark_servers.connect_server(work, master="local[2]")))
        stack.callback(stop_session)
        get_session(settings)
        yield request.param, settings


_first_rows: dict[str, list] = {}


def run_rows(kind: str, specs, backend) -> list[dict]:
    """The sweep's rows, asserted identical to those the first backend returned."""
    table = whatif.run(parse_spec(specs[kind]), backend[1])
    rows = whatif.rows_as_json(table)
    assert rows == _first_rows.setdefault(kind, rows), f"{kind} rows differ on {backend[0]}"
    return rows


# ---- limits ------------------------------------------------------------------------------------
def test_limit_rows_equal_limits_create_topics(specs, files, backend, tmp_path):
    rows = run_rows("limits", specs, backend)
    assert [r["scenario"] for r in rows] == list(range(6))
    assert {(r["max_broker_partitions"], r["add_brokers"]) for r in rows} == {
        (m, a) for m in (150, 165, None) for a in (0, 2)}
    snap_path = files / "small.json"
    from backend.model.io import load_snapshot

    snap = load_snapshot(snap_path)
    topics = [f"--topic={t['topic']}:{t['partitions']}:{t['rf']}" for t in WORKLOAD]

    def verb(add: int, limit: int | None) -> dict:
        path = tmp_path / f"plus-{add}.json"
        save_snapshot(with_brokers_added(snap, add), path)
        flags = [] if limit is None else ["--max-broker-partitions", limit]
        return cli("limits", "create-topics", "--snapshot", path, *topics, *flags)

    for r in rows:
        answer = verb(r["add_brokers"], r["max_broker_partitions"])
        assert r["result"] == answer
        assert r["ok"] == answer["ok"]
        assert r["accepted"] == [t["name"] for t in answer["topics"] if t["ok"]]
        assert r["rejected"] == [t["name"] for t in answer["topics"] if not t["ok"]]
        # KIP-578's max.partitions counts replicas: the column says so (issue 26 item 10)
        assert r["cluster_replicas_after"] == answer["cluster_partitions_after"]
        limit = r["max_broker_partitions"]
        assert r["brokers_over_limit"] == ([] if limit is None else [
            int(b) for b, n in answer["broker_partitions_after"].items() if n > limit])
        room = list(answer["capacity_after"].values())
        if r["max_broker_partitions"] is None:
            assert r["min_capacity"] is None and r["brokers_at_limit"] is None
        else:
            assert r["min_capacity"] == min(room)
            assert r["brokers_at_limit"] == room.count(0)
        k = r["brokers_to_add"]
        if backend[0] == "local" and k:  # brokers to add: the verb agrees at k, not at k - 1
            assert verb(r["add_brokers"] + k, r["max_broker_partitions"])["ok"]
            assert not verb(r["add_brokers"] + k - 1, r["max_broker_partitions"])["ok"]
    assert any(not r["ok"] for r in rows) and any(r["ok"] for r in rows)
    assert any(r["brokers_over_limit"] for r in rows)  # at 150, brokers already over


# ---- throttle ------------------------------------------------------------------------------------
def test_throttle_rows_equal_throttle_plan(specs, files, backend):
    from backend.model.io import load_snapshot
    from backend.model.reassignment import load_reassignment

    rows = run_rows("throttle", specs, backend)
    snap = load_snapshot(files / "small.json")
    plan = load_reassignment(str(files / "plan.json"), snap)
    assert len(rows) == 6
    for r in rows:
        answer = cli("throttle", "plan", "--snapshot", files / "small.json", "--reassignment",
                     files / "plan.json", "--throttle", int(r["throttle"]),
                     "--window-num", r["window_num"])
        assert r["result"] == answer
        for key in ("eta_seconds", "moved_partitions", "bytes_to_move",
                    "max_fetch_response_bytes", "fetch_response_ok", "suggested_throttle",
                    "kip73_move_time_seconds"):
            assert r[key] == answer[key], key
        assert r["brokers_outside_safe_band"] == [
            b["id"] for b in answer["brokers"] if not b["in_safe_band"]]
        # and the plan as Railyard's executor runs it, batch after batch (the chart's), at
        # min(T, N): no broker copies faster than its network (1 GbE here), so 150 MB/s
        # runs at 125 MB/s
        assert r["batched_eta_seconds"] == pytest.approx(batched_eta_seconds(
            snap, plan, execution_batches(snap, plan),
            min(r["throttle"], DEFAULT_NETWORK_CAPACITY)))
    assert any(r["eta_seconds"] is None for r in rows)  # 1 MB/s never catches up
    assert any(r["eta_seconds"] is not None for r in rows)


# ---- quota ------------------------------------------------------------------------------------
def test_quota_rows_equal_quota_replay(specs, files, backend):
    rows = run_rows("quota", specs, backend)
    for scenario in range(4):
        mine = [r for r in rows if r["scenario"] == scenario]
        rate, samples = mine[0]["rate"], mine[0]["samples"]
        answer = cli("quota", "replay", "--requests", files / "requests.jsonl", "--rate", rate,
                     "--samples", samples, "--mode", "strict")
        keys = list(answer["principals"][0])
        assert [{k: r[k] for k in keys} for r in mine] == answer["principals"]
        assert all(r["mode"] == "strict" for r in mine)
    assert any(r["rejected"] for r in rows)


# ---- fleet --------------------------------------------------------------------------------------
def test_fleet_rows_match_snapshot_describe(specs, files, backend):
    rows = run_rows("fleet", specs, backend)
    east_then = cli("snapshot", "describe", files / "east-1.json")
    east_now = cli("snapshot", "describe", files / "east-2.parquet")
    west = cli("snapshot", "describe", files / "west.json")
    then = {b["id"]: b["replicas"] for b in east_then["brokers"]}
    own = [r for r in rows if r["scenario"] == 0]
    assert [(r["cluster"], r["broker"]) for r in own] == (
        [("east", b["id"]) for b in east_now["brokers"]]
        + [("west", b["id"]) for b in west["brokers"]])
    for r, b in zip(own, east_now["brokers"] + west["brokers"], strict=True):
        assert r["replicas"] == b["replicas"]
        assert r["headroom"] == b["capacity"]  # the snapshot's own limit (none for west)
    for r in own[:6]:
        if r["broker"] in then:
            assert r["growth_per_day"] == pytest.approx((r["replicas"] - then[r["broker"]]) / 10)
            if r["growth_per_day"] > 0 and r["headroom"] > 0:
                assert r["days_to_limit"] == pytest.approx(r["headroom"] / r["growth_per_day"])
        else:
            assert r["growth_per_day"] is None and r["days_to_limit"] is None
    assert all(r["growth_per_day"] == 4 and r["headroom"] is None for r in own[6:])
    capped = [r for r in rows if r["scenario"] == 1]
    assert all(r["max_broker_partitions"] == 150 for r in capped)
    west_capped = [r for r in capped if r["cluster"] == "west"]
    assert [r["headroom"] for r in west_capped] == [max(150 - b["replicas"], 0)
                                                     for b in west["brokers"]]
    assert [r["days_to_limit"] for r in west_capped] == pytest.approx(
        [max(150 - b["replicas"], 0) / 4 for b in west["brokers"]])


# ---- progress, cancellation, errors, the CLI (on one backend) -----------------------------------
def test_progress_reaches_the_end(specs, backend):
    seen = []
    whatif.run(parse_spec(specs["limits"]), backend[1], progress=lambda d, t: seen.append((d, t)))
    assert seen[-1][0] == seen[-1][1] > 0
    assert all(d <= t for d, t in seen)


@pytest.mark.parametrize("kind", ["limits"])
def test_cancel_interrupts_the_job(specs, backend, kind):
    spec = dict(specs[kind], detail=False,
                grid={"max.broker.partitions": list(range(100, 400)), "add_brokers": [0, 1, 2]})
    cancel = threading.Event()
    with pytest.raises(SweepCancelled):
        whatif.run(parse_spec(spec), backend[1], progress=lambda d, t: cancel.set(),
                   cancel=cancel)
    # the session survives a cancelled sweep
    assert len(whatif.run(parse_spec(specs["limits"]), backend[1])) == 6


def test_engine_bad_input_names_the_scenario(specs, backend):
    """An engine's one-line error survives the trip from the Python worker to the driver
    (through the JVM, or Spark Connect's gRPC) and names the scenario."""
    spec = dict(specs["limits"], workload=[{"topic": "wide", "partitions": 3, "rf": 7}],
                grid={"add_brokers": [0, 1]})
    with pytest.raises(BadInput, match=r"scenario 0: topic 'wide': replication factor 7"):
        whatif.run(parse_spec(spec), backend[1])


def test_cli_writes_parquet_and_json(specs, backend, tmp_path):
    """`whatif sweep` reaches each Spark through its own flag and returns the same rows.
    The file is written by the driver from the rows it collected, the same whatever the
    Spark (services.whatif.write_rows): JSON is written once, on local, so a cluster's
    application is not started twice for the same rows."""
    settings = backend[1]
    where = ["--spark-remote", settings.remote] if settings.is_remote else \
        ["--spark-master", settings.master]
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(specs["throttle"]))
    expected = run_rows("throttle", specs, backend)
    out = cli("whatif", "sweep", "--spec", spec_file, *where, "--out", tmp_path / "rows.parquet")
    assert out["row_count"] == 6 and out["kind"] == "throttle"
    import pyarrow.parquet as pq

    assert whatif.rows_as_json(pq.read_table(tmp_path / "rows.parquet")) == expected
    if backend[0] == "local":
        cli("whatif", "sweep", "--spec", spec_file, *where, "--out", tmp_path / "rows.json")
        assert json.loads((tmp_path / "rows.json").read_text()) == expected
