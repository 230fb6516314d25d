"""The what-if page's sweeps are assembled by the service (services.whatif.sweep_for_page):
the cluster's snapshot written as the spec's file, an uploaded workload kept only while
the sweep runs (however it ends), the page itself writing no file."""

from __future__ import annotations

import base64
import threading
from pathlib import Path

import pandas as pd
import pytest

from backend.errors import BadInput
from backend.model.snapshot import Limits
from backend.services import whatif
from backend.services.cluster import ClusterSource
from backend.spark.sweeps import SweepCancelled
from backend.twin.cluster import TwinCluster
from backend.twin.gateway import TwinGateway
from backend.twin.generate import generate_snapshot

WORKLOAD = b'{"t": 0.0, "user": "u", "client_id": "c", "op": "create_topics", "partitions": 6}\n'


@pytest.fixture
def source():
    twin = TwinCluster(generate_snapshot(4, 2, 3, 12, 3, seed=3, cluster="small"))
    return ClusterSource("small", None, Limits(), gateway=TwinGateway(twin))


def upload(data: bytes) -> str:
    return "data:application/octet-stream;base64," + base64.b64encode(data).decode()


def recording(ran: list[dict]):
    """run_for_page without Spark: which inputs the spec named, and whether they exist."""
    def run(spec, spark_config, progress, cancel):
        ran.append({k: (Path(v).exists() if k in ("snapshot", "requests") else v)
                    for k, v in spec.items()})
        if cancel is not None and cancel.is_set():
            raise SweepCancelled()
        return pd.DataFrame({"scenario": [0]})
    return run


def test_a_quota_sweeps_upload_lives_only_while_it_runs(source, tmp_path, monkeypatch):
    ran: list[dict] = []
    monkeypatch.setattr(whatif, "run_for_page", recording(ran))
    rows = whatif.sweep_for_page("quota", "rate=2,5", None, source, (None, None),
                                 (upload(WORKLOAD), "mine.jsonl"), work_dir=str(tmp_path),
                                 spark_config={}, max_upload_bytes=10_000)
    assert rows["scenario"].tolist() == [0]
    assert ran == [{"kind": "quota", "requests": True, "grid": {"rate": [2, 5]}}]
    assert list(tmp_path.glob("*.jsonl")) == []  # deleted once the sweep ended
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(SweepCancelled):
        whatif.sweep_for_page("quota", "rate=2", None, source, (None, None),
                              (upload(WORKLOAD), "mine.jsonl"), work_dir=str(tmp_path),
                              spark_config={}, max_upload_bytes=10_000, cancel=cancel)
    assert list(tmp_path.glob("*.jsonl")) == []  # also when it was cancelled


def test_a_limits_sweep_names_the_snapshot_file_it_wrote(source, tmp_path, monkeypatch):
    ran: list[dict] = []
    monkeypatch.setattr(whatif, "run_for_page", recording(ran))
    whatif.sweep_for_page("limits", "max.broker.partitions=40", "orders:10:3", source,
                          (None, None), (None, None), work_dir=str(tmp_path), spark_config={},
                          max_upload_bytes=10_000)
    assert ran[0]["snapshot"] is True and list(tmp_path.glob("small-*.parquet"))
    with pytest.raises(BadInput, match="workload"):
        whatif.sweep_for_page("limits", "max.broker.partitions=40", "", source,
                              (None, None), (None, None), work_dir=str(tmp_path),
                              spark_config={}, max_upload_bytes=10_000)


def test_the_default_workload_is_new_on_both_demo_clusters():
    """The sweeps tab's default workload named "clicks", a topic of the Apache Kafka
    demo, so its first sweep there was refused ("workload: clicks already in cluster
    'kafka'") before anything ran."""
    from backend.twin.examples import demo_snapshot
    from dashboard.demo_kafka import TOPICS

    names = {w["topic"] for w in whatif.parse_workload(whatif.DEFAULT_WORKLOAD)}
    twin = demo_snapshot()
    assert names and not names & set(TOPICS)
    assert not [n for n in names if twin.has_topic(n)]
