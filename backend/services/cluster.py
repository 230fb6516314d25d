"""Where a cluster's assignment comes from: its gateway when it has one, else (or when the
gateway does not answer) its snapshot file. The one cache of cluster reads lives here:
assignments and what the gateway describes (configs, quotas), kept CLUSTER_TTL_SECONDS.

A snapshot file is read again only when it changes (its size or modification time): a
cluster whose gateway does not answer would otherwise re-parse a 200k-partition file
on every page refresh past the TTL.

Anything that cannot be read is ``Unavailable`` naming what is missing (a page turns it
into a banner).
"""

from __future__ import annotations

import itertools
import os
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from backend.cache import CacheBackend, TtlCache
from backend.engines.quota import DEFAULT_SAMPLES, DEFAULT_WINDOW_SECONDS
from backend.errors import BadInput, Unavailable
from backend.gateways.base import ClusterReader
from backend.model.io import load_snapshot, save_snapshot
from backend.model.snapshot import NEAR_LIMIT_RATIO, Limits, Snapshot

T = TypeVar("T")
CLUSTER_TTL_SECONDS = 5.0  # a cluster's assignment and configs, re-read this often at most


@dataclass(frozen=True)
class ClusterSource:
    """Where a cluster's assignment, configs and metrics come from (the dashboard config)."""

    name: str
    snapshot_file: str | None
    limits: Limits
    prometheus_url: str | None = None
    dialect: str = "strimzi"
    prometheus_timeout: float = 5.0
    prometheus_authorization: str | None = field(default=None, repr=False)  # its header
    prometheus_ca_file: str | None = None
    metrics_ttl: int = 10
    metrics_cache: CacheBackend | None = field(default=None, compare=False)  # the dashboard's
    gateway: ClusterReader | None = field(default=None, compare=False)  # live cluster
    default_mutation_rate: float | None = None  # KIP-599 quota of the default principal
    quota_window_num: int = DEFAULT_SAMPLES
    quota_window_seconds: int = DEFAULT_WINDOW_SECONDS
    near_limit_ratio: float = NEAR_LIMIT_RATIO  # from which share of a limit it is "near"


_reads = TtlCache("cluster", CLUSTER_TTL_SECONDS)  # in process: snapshots are large
_fallbacks: dict[str, str] = {}  # cluster -> why its gateway did not answer
_files: dict[str, tuple[tuple, Snapshot]] = {}  # path -> (its stat and limits, what it held)
_files_lock = threading.Lock()


def cluster_read(source: ClusterSource, question: str, read: Callable[[], T]) -> T:
    """``read()``'s answer about this cluster, kept CLUSTER_TTL_SECONDS (failures are not
    kept: the next ask tries again). Kept per source of the answer, not per name only: two
    dashboards in one process (an app rebuilt with another config) never share answers."""
    return _reads.fetch(_read_key(source, question), read)


def _read_key(source: ClusterSource, question: str) -> tuple:
    return source.name, source.snapshot_file, _gateway_token(source.gateway), question


_tokens: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # gateway -> its number
_numbers = itertools.count(1)
_tokens_lock = threading.Lock()


def _gateway_token(gateway: ClusterReader | None) -> int:
    """A number per gateway object, never given twice in a process: id() is reused once an
    object is collected, and a new gateway of the same cluster name got the answers of a
    collected one (a rebuilt app, a test after another)."""
    if gateway is None:
        return 0
    with _tokens_lock:
        token = _tokens.get(gateway)
        if token is None:
            token = _tokens[gateway] = next(_numbers)
        return token


def cluster_snapshot(source: ClusterSource, fresh: bool = False) -> Snapshot:
    """The cluster's current assignment with its configured limits (kept briefly): read
    through the gateway when the cluster has one, else (or when the gateway does not
    answer; assignment_note says so) from its snapshot file.

    ``fresh``: read the live cluster now, what proposing, approving and executing a plan
    check against (a move seconds ago must count). A gateway that does not answer is then
    Unavailable naming the cluster and the cause, never the snapshot file's assignment: a
    plan approved against a stale file could run moves computed for another cluster. A
    cluster without a gateway is its snapshot file."""
    if fresh:
        snap = _read_assignment(source, live=True)
        _reads.put(_read_key(source, "assignment"), snap)
        return snap
    return cluster_read(source, "assignment", lambda: _read_assignment(source))


def touched_snapshot(source: ClusterSource, topics: list[str]) -> Snapshot:
    """The named topics' assignment read from the live cluster now, never kept or taken
    from the cache: what approving and executing re-check a plan's basis on. Only those
    topics (``topics_assignment``: one Metadata request for them on Kafka) instead of the
    whole cluster's assignment; a topic the cluster no longer has is absent (the check
    names it). A gateway that does not
    answer is Unavailable, as for ``cluster_snapshot(fresh=True)``; a cluster without a
    gateway is its snapshot file."""
    if source.gateway is None:
        return _read_assignment(source, live=True)
    try:
        return source.gateway.topics_assignment(sorted(set(topics)))
    except Unavailable as e:
        raise _not_live(source, e) from None


def _not_live(source: ClusterSource, e: Unavailable) -> Unavailable:
    return Unavailable(f"Cluster '{source.name}'", f"its gateway did not answer ({e}); plans "
                       f"are checked against the live cluster, never a snapshot file: try "
                       f"again when it answers")


def _read_assignment(source: ClusterSource, live: bool = False) -> Snapshot:
    snap = None
    if source.gateway is not None:
        try:
            snap = source.gateway.assignment()
            _fallbacks.pop(source.name, None)
        except Unavailable as e:
            if live:
                raise _not_live(source, e) from None
            if source.snapshot_file is None:
                raise
            _fallbacks[source.name] = f"{e}; showing the assignment in {source.snapshot_file}"
    if snap is None and source.snapshot_file is None:
        raise Unavailable(f"Cluster '{source.name}'", "no snapshot file configured and no "
                          "gateway to read the assignment from")
    if snap is None:
        return _snapshot_file(source)
    return _with_source_limits(snap, source)


def _with_source_limits(snap: Snapshot, source: ClusterSource) -> Snapshot:
    return snap.with_limits(snap.limits.merged(source.limits.max_broker_partitions,
                                               source.limits.max_partitions))


def _snapshot_file(source: ClusterSource) -> Snapshot:
    """The snapshot file's assignment, parsed again only when the file changed: the same
    object while it did not (so what is derived from it can be kept by identity)."""
    path = str(source.snapshot_file)
    try:
        st = os.stat(path)
        mark = (st.st_mtime_ns, st.st_size, st.st_ino, source.limits)
    except OSError:
        mark = None  # load_snapshot says what is wrong with it
    with _files_lock:
        hit = _files.get(path)
    if mark is not None and hit is not None and hit[0] == mark:
        return hit[1]
    try:
        snap = _with_source_limits(load_snapshot(path), source)
    except BadInput as e:
        raise Unavailable(f"Cluster '{source.name}'", str(e)) from None
    with _files_lock:
        _files[path] = (mark, snap)
    return snap


def assignment_note(source: ClusterSource) -> str | None:
    """Why the assignment shown comes from the snapshot file instead of the gateway."""
    return _fallbacks.get(source.name)


def snapshot_file(source: ClusterSource, directory: str) -> str:
    """The cluster's snapshot as a file (what sweep specs name), written once per TTL."""
    snap = cluster_snapshot(source)
    path = Path(directory) / f"{source.name}-{id(snap)}.parquet"
    if not path.exists():
        save_snapshot(snap, path)
    return str(path)
