"""Where the pages read a cluster's assignment from: a snapshot file is parsed again only
when it changes, and Railyard's recording rules run on their own, slower clock."""

from __future__ import annotations

import os

from backend.metrics import recording
from backend.model import io
from backend.model.io import save_snapshot
from backend.model.snapshot import Limits
from backend.services import cluster
from backend.services.cluster import ClusterSource
from backend.twin.generate import generate_snapshot


def test_an_unchanged_snapshot_file_is_parsed_once_and_a_rewritten_one_again(
        tmp_path, monkeypatch):
    path = tmp_path / "c.parquet"
    save_snapshot(generate_snapshot(4, 2, 3, 24, 2, seed=1, cluster="c"), path)
    reads = []
    real = io.load_snapshot
    monkeypatch.setattr(cluster, "load_snapshot", lambda p: reads.append(p) or real(p))
    source = ClusterSource("c", str(path), Limits(max_broker_partitions=50))
    first = cluster._read_assignment(source)  # what every TTL expiry of the cache calls
    assert cluster._read_assignment(source) is first  # the same object: nothing re-parsed
    assert len(reads) == 1 and first.limits.max_broker_partitions == 50
    other = ClusterSource("c", str(path), Limits(max_broker_partitions=60))
    assert cluster._read_assignment(other).limits.max_broker_partitions == 60  # new limits
    save_snapshot(generate_snapshot(4, 2, 3, 30, 2, seed=2, cluster="c"), path)
    os.utime(path, ns=(1, 1))  # a rewrite within the same clock tick still counts
    assert cluster._read_assignment(source).n_partitions == 30
    assert len(reads) == 3


def test_recording_rules_run_once_a_minute_not_at_the_scrape_interval():
    group = recording.recording_rules("strimzi")["groups"][0]
    assert group["interval"] == "60000ms"
    assert recording.recording_rules("strimzi", 0.5)["groups"][0]["interval"] == "500ms"
