"""Snapshot files: the JSON form people write and read, Parquet for very large clusters.

Loading validates everything an engine relies on and raises BadInput naming the file
and the offending element, so a typo never turns into a wrong answer.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from backend.errors import BadInput
from backend.model.bounds import MAX_BROKER_ID, MAX_LONG, check_long, check_total_bytes
from backend.model.names import check_topic_name
from backend.model.snapshot import DEFAULT_RETENTION_MS, Limits, Snapshot, is_internal_name

PARQUET_META_KEY = b"railyard.snapshot"
FORMAT_VERSION = 1


def read_json(path: str | os.PathLike, what: str = "file") -> Any:
    """Parse a JSON file, turning every failure into one actionable line."""
    try:
        with open(path, "rb") as f:
            return orjson.loads(f.read())
    except FileNotFoundError:
        raise BadInput(f"{path}: no such {what}") from None
    except IsADirectoryError:
        raise BadInput(f"{path}: is a directory, expected a {what}") from None
    except PermissionError:
        raise BadInput(f"{path}: permission denied") from None
    except orjson.JSONDecodeError as e:
        where = f"line {e.lineno} column {e.colno}"
        raise BadInput(f"{path}: invalid JSON at {where}: {e.msg}") from None


def load_snapshot(path: str | os.PathLike) -> Snapshot:
    """Load a snapshot from .json or .parquet (chosen by the file name)."""
    if str(path).endswith(".parquet"):
        return _load_parquet(path)
    return snapshot_from_dict(read_json(path, "snapshot file"), source=str(path))


def save_snapshot(snap: Snapshot, path: str | os.PathLike, flag: str = "--out") -> None:
    """Write a snapshot as .json or .parquet (chosen by the file name), all or nothing."""
    with atomic_output(path, flag) as tmp:
        if str(path).endswith(".parquet"):
            _save_parquet(snap, str(tmp))
        else:
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(snapshot_to_dict(snap), f, separators=(",", ":"))


# ---- output files -------------------------------------------------------------------------
_UMASK = os.umask(0o022)
os.umask(_UMASK)


def check_output_path(path: str | os.PathLike, flag: str,
                      suffixes: tuple[str, ...] = ()) -> None:
    """Refuse an output path that cannot be written, before the work that fills it starts.

    Creates nothing: a missing folder is refused (a typo made /nonexist as root), and the
    folder is probed with a temporary file that is removed at once (root passes every
    permission check, so only a real write tells).
    """
    if not str(path):
        raise BadInput(f"{flag}: give a file name")
    where = f"{flag} {path}"
    if suffixes and not str(path).endswith(suffixes):
        raise BadInput(f"{where}: expected a {' or '.join(suffixes)} file name")
    p = Path(path).absolute()
    try:
        if p.is_dir():
            raise BadInput(f"{where}: is a directory, expected a file name")
        if p.exists() and not p.is_file():
            raise BadInput(f"{where}: exists and is not a regular file")
        folder = p.parent
        if not folder.exists():
            raise BadInput(f"{where}: no folder {os.path.dirname(path) or folder}")
    except OSError as e:
        raise BadInput(f"{where}: cannot be checked ({e.strerror or e})") from None
    if not folder.is_dir():
        raise BadInput(f"{where}: {folder} is not a directory")
    probe_folder(folder, where)


def probe_folder(folder: Path, where: str) -> None:
    """Refuse (naming ``where``) a folder no file can be written in, by writing one and
    removing it at once: root passes every permission check, so only a real write tells."""
    try:
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".railyard-probe-")
    except OSError as e:
        raise BadInput(f"{where}: cannot write in {folder} ({e.strerror or e})") from None
    os.close(fd)
    os.unlink(probe)


@contextmanager
def atomic_output(path: str | os.PathLike, flag: str) -> Iterator[Path]:
    """A temporary file beside ``path`` that becomes ``path`` when the block succeeds.

    On any failure the temporary file and any folders made for it are removed, so a
    refusal leaves nothing behind; an OSError becomes BadInput naming the flag and path.
    """
    p = Path(path)
    missing = []
    folder = p.parent
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    made: list[Path] = []
    tmp: str | None = None
    try:
        for d in reversed(missing):
            d.mkdir()
            made.append(d)
        fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
        os.close(fd)
        yield Path(tmp)
        os.chmod(tmp, 0o666 & ~_UMASK)
        os.replace(tmp, p)
    except BaseException as e:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        for d in reversed(made):
            d.rmdir()
        if isinstance(e, OSError):
            raise BadInput(f"{flag} {path}: cannot write ({e.strerror or e})") from None
        raise


# ---- JSON -------------------------------------------------------------------------------
def _int(value: Any, where: str, minimum: int | None = None, maximum: int = MAX_LONG) -> int:
    """An integer in [minimum, maximum]: past it, numpy's int64 (or int32) would overflow."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadInput(f"{where}: expected an integer, got {json.dumps(value)}")
    if minimum is not None and value < minimum:
        raise BadInput(f"{where}: must be at least {minimum}, got {value}")
    if value > maximum:
        raise BadInput(f"{where}: must be at most {maximum}, got {str(value)[:24]}")
    return value


def _flag(t: dict, key: str, default: bool, where: str) -> bool:
    """A JSON true/false: "no" or 0 read by truthiness would silently flip the meaning."""
    value = t.get(key, default)
    if not isinstance(value, bool):
        raise BadInput(f"{where} {key}: expected true or false, got {json.dumps(value)}")
    return value


def _size(value: Any, where: str) -> int:
    """Bytes: a whole number >= 0 (1e9 is one), never a fraction truncated in silence."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise BadInput(f"{where}: expected a whole number of bytes >= 0, "
                       f"got {json.dumps(value)}")
    return check_long(value, where)


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise BadInput(f"{where}: expected a number >= 0, got {json.dumps(value)}")
    return check_long(value, where)


def _limits_from(obj: Any, where: str) -> Limits:
    if obj is None:
        return Limits()
    if not isinstance(obj, dict):
        raise BadInput(f"{where}: 'limits' must be an object")
    unknown = set(obj) - {"max.broker.partitions", "max.partitions"}
    if unknown:
        raise BadInput(f"{where}: unknown limit '{sorted(unknown)[0]}'")
    values = []
    for key in ("max.broker.partitions", "max.partitions"):
        v = obj.get(key)
        values.append(None if v is None else _int(v, f"{where}: limits.{key}", 0))
    return Limits(*values)


def check_racks(racks: list, ids: list, source: str) -> None:
    """All brokers have a rack or none has: Kafka refuses rack-aware placement otherwise."""
    missing = [i for i, r in zip(ids, racks, strict=True) if r is None]
    if missing and len(missing) < len(ids):
        raise BadInput(f"{source}: broker {missing[0]} has no rack while others have one: "
                       "give every broker a rack or none (Kafka refuses rack-aware placement "
                       "otherwise)")


def check_cluster_name(cluster: Any, source: str) -> str:
    """A snapshot's cluster name: a non-empty string, in JSON and Parquet alike."""
    if not isinstance(cluster, str) or not cluster:
        raise BadInput(f"{source}: 'cluster' must be a non-empty string")
    return cluster


def snapshot_from_dict(obj: Any, source: str = "snapshot") -> Snapshot:
    """Validate and convert the documented JSON form (docs/snapshot-format.md)."""
    if not isinstance(obj, dict):
        raise BadInput(f"{source}: a snapshot is a JSON object with 'brokers' and 'topics'")
    cluster = check_cluster_name(obj.get("cluster", "cluster"), source)
    brokers = obj.get("brokers")
    if not isinstance(brokers, list) or not brokers:
        raise BadInput(f"{source}: 'brokers' must be a non-empty list")
    ids, racks = [], []
    for i, b in enumerate(brokers):
        if not isinstance(b, dict):
            raise BadInput(f"{source}: brokers[{i}] must be an object with an 'id'")
        ids.append(_int(b.get("id"), f"{source}: brokers[{i}].id", 0, MAX_BROKER_ID))
        rack = b.get("rack")
        if rack is not None and (not isinstance(rack, str) or not rack):
            raise BadInput(f"{source}: broker {ids[-1]}: 'rack' must be a non-empty string or null")
        racks.append(rack)
    order = np.argsort(np.asarray(ids), kind="stable")
    sorted_ids = np.asarray(ids, dtype=np.int64)[order]
    dup = np.flatnonzero(np.diff(sorted_ids) == 0)
    if len(dup):
        raise BadInput(f"{source}: broker {sorted_ids[dup[0]]} is listed twice")
    check_racks(racks, ids, source)
    broker_ids = sorted_ids.astype(np.int32)
    broker_racks = [racks[i] for i in order]
    pos_of = {int(b): p for p, b in enumerate(broker_ids)}

    topics = obj.get("topics", [])
    if not isinstance(topics, list):
        raise BadInput(f"{source}: 'topics' must be a list")
    names, internal, keyed, retention = [], [], [], []
    part_topic, rf, flat, sizes, rates = [], [], [], [], []
    seen = set()
    for ti, t in enumerate(topics):
        if not isinstance(t, dict) or not isinstance(t.get("name"), str) or not t["name"]:
            raise BadInput(f"{source}: topics[{ti}] needs a non-empty string 'name'")
        name = check_topic_name(t["name"], f"{source}: topics[{ti}]")
        if name in seen:
            raise BadInput(f"{source}: topic '{name}' is listed twice")
        seen.add(name)
        names.append(name)
        internal.append(_flag(t, "internal", is_internal_name(name), f"{source}: topic '{name}'"))
        keyed.append(_flag(t, "keyed", False, f"{source}: topic '{name}'"))
        retention.append(_int(t.get("retention_ms", DEFAULT_RETENTION_MS),
                              f"{source}: topic '{name}' retention_ms", -1))
        if "partitions" not in t:
            raise BadInput(f"{source}: topic '{name}': missing 'partitions' (give its "
                           "partitions' replicas)")
        plist = t["partitions"]  # [] is a topic Kafka was still creating when it was read
        if not isinstance(plist, list):
            raise BadInput(f"{source}: topic '{name}': 'partitions' must be a list")
        numbered = {}
        for p in plist:
            where = f"{source}: topic '{name}'"
            if not isinstance(p, dict):
                raise BadInput(f"{where}: each partition must be an object")
            num = _int(p.get("partition"), f"{where} partition number", 0)
            if num in numbered:
                raise BadInput(f"{where}: partition {num} is listed twice")
            numbered[num] = p
        if numbered and sorted(numbered) != list(range(len(numbered))):
            missing = sorted(set(range(len(numbered))) - set(numbered))[0]
            raise BadInput(f"{source}: topic '{name}': partition {missing} is missing "
                           "(partitions are numbered 0..n-1)")
        for num in range(len(numbered)):
            p = numbered[num]
            where = f"{source}: partition {name}-{num}"
            reps = p.get("replicas")
            if not isinstance(reps, list) or not reps:
                raise BadInput(f"{where}: 'replicas' must be a non-empty list of broker ids")
            if len(set(map(repr, reps))) != len(reps):
                raise BadInput(f"{where}: a broker appears twice in replicas {reps}")
            for r in reps:
                if _int(r, f"{where} replica", 0) not in pos_of:
                    raise BadInput(f"{where}: replica on broker {r}, which is not in 'brokers'")
                flat.append(pos_of[r])
            rf.append(len(reps))
            part_topic.append(ti)
            sizes.append(_size(p.get("size_bytes", 0), f"{where} size_bytes"))
            rates.append(_number(p.get("bytes_in_per_sec", 0.0), f"{where} bytes_in_per_sec"))
    float_sizes = np.asarray(sizes, dtype=np.float64)
    check_total_bytes(float_sizes, np.asarray(rf, dtype=np.int64), source)
    part_size = np.asarray(sizes, dtype=np.int64)  # whole numbers, each within a long
    return Snapshot.build(
        cluster,
        broker_ids,
        broker_racks,
        names,
        np.asarray(part_topic, dtype=np.int32),
        np.concatenate(([0], np.cumsum(rf, dtype=np.int64))),
        np.asarray(flat, dtype=np.int32),
        topic_internal=internal,
        topic_keyed=keyed,
        topic_retention_ms=retention,
        part_size=part_size,
        part_rate=np.asarray(rates, dtype=np.float64),
        limits=_limits_from(obj.get("limits"), source),
    )


def snapshot_to_dict(snap: Snapshot) -> dict:
    """The documented JSON form of a snapshot (round-trips through snapshot_from_dict)."""
    ids = snap.broker_ids.tolist()
    replicas = snap.broker_ids[snap.replica_broker].tolist()
    offsets = snap.replica_offsets.tolist()
    sizes, rates = snap.part_size.tolist(), snap.part_rate.tolist()
    topics = []
    starts = snap.topic_starts.tolist()
    for t, name in enumerate(snap.topic_names):
        parts = [
            {
                "partition": row - starts[t],
                "replicas": replicas[offsets[row] : offsets[row + 1]],
                "size_bytes": sizes[row],
                "bytes_in_per_sec": rates[row],
            }
            for row in range(starts[t], starts[t + 1])
        ]
        topics.append({"name": name, "internal": bool(snap.topic_internal[t]),
                       "keyed": bool(snap.topic_keyed[t]),
                       "retention_ms": int(snap.topic_retention_ms[t]), "partitions": parts})
    limits = {}
    if snap.limits.max_broker_partitions is not None:
        limits["max.broker.partitions"] = snap.limits.max_broker_partitions
    if snap.limits.max_partitions is not None:
        limits["max.partitions"] = snap.limits.max_partitions
    return {
        "cluster": snap.cluster,
        "brokers": [{"id": i, "rack": r} for i, r in zip(ids, snap.broker_racks, strict=True)],
        "topics": topics,
        "limits": limits,
    }


# ---- Parquet ------------------------------------------------------------------------------
def snapshot_to_parquet_bytes(snap: Snapshot) -> bytes:
    """The Parquet form in memory (what the twin's HTTP API sends)."""
    import pyarrow as pa  # pyarrow only for Parquet: JSON snapshots start faster without it

    sink = pa.BufferOutputStream()
    _save_parquet(snap, sink)
    return sink.getvalue().to_pybytes()


def snapshot_from_parquet_bytes(data: bytes, source: str) -> Snapshot:
    """Inverse of snapshot_to_parquet_bytes; ``source`` names the data in errors."""
    import pyarrow as pa

    return _load_parquet(pa.BufferReader(data), source)


def _save_parquet(snap: Snapshot, path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    replicas = pa.ListArray.from_arrays(
        pa.array(snap.replica_offsets.astype(np.int32)),
        pa.array(snap.broker_ids[snap.replica_broker]),
    )
    table = pa.table({
        "topic": pa.array(snap.part_topic),
        "size_bytes": pa.array(snap.part_size),
        "bytes_in_per_sec": pa.array(snap.part_rate),
        "replicas": replicas,
    })
    meta = {
        "format": FORMAT_VERSION,
        "cluster": snap.cluster,
        "brokers": {"id": snap.broker_ids.tolist(), "rack": list(snap.broker_racks)},
        "topics": {"name": list(snap.topic_names), "internal": snap.topic_internal.tolist(),
                   "keyed": snap.topic_keyed.tolist(),
                   "retention_ms": snap.topic_retention_ms.tolist()},
        "limits": {"max.broker.partitions": snap.limits.max_broker_partitions,
                   "max.partitions": snap.limits.max_partitions},
    }
    table = table.replace_schema_metadata({PARQUET_META_KEY: json.dumps(meta).encode()})
    pq.write_table(table, path, compression="zstd")


def _numpy(column) -> np.ndarray:
    """A numeric Arrow column as a numpy array, from its data buffer when it has no nulls
    (pyarrow's to_numpy imports pandas, a second of start-up on a busy machine)."""
    import pyarrow.types as pt

    a = column.combine_chunks() if hasattr(column, "combine_chunks") else column
    if a.null_count or not (pt.is_integer(a.type) or pt.is_floating(a.type)):
        return a.to_numpy(zero_copy_only=False)
    dtype = np.dtype(a.type.to_pandas_dtype())
    return np.frombuffer(a.buffers()[1], dtype=dtype, count=len(a), offset=a.offset
                         * dtype.itemsize).copy()


def _load_parquet(where, path: str | None = None) -> Snapshot:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = path or str(where)
    try:
        table = pq.ParquetFile(where).read()  # read_table would import pyarrow.dataset, pandas
    except FileNotFoundError:
        raise BadInput(f"{path}: no such snapshot file") from None
    except (OSError, pa.ArrowInvalid) as e:
        raise BadInput(f"{path}: not a readable Parquet file ({e})") from None
    raw = (table.schema.metadata or {}).get(PARQUET_META_KEY)
    if raw is None:
        raise BadInput(f"{path}: Parquet file has no Railyard snapshot metadata")
    meta = json.loads(raw)
    if meta.get("format") != FORMAT_VERSION:
        raise BadInput(f"{path}: snapshot format {meta.get('format')} is not supported")
    check_cluster_name(meta.get("cluster"), path)
    replicas = table.column("replicas").combine_chunks()
    broker_ids = np.asarray(meta["brokers"]["id"], dtype=np.int32)
    check_racks(meta["brokers"]["rack"], meta["brokers"]["id"], path)
    for i, name in enumerate(meta["topics"]["name"]):
        check_topic_name(name, f"{path}: topics[{i}]")
    part_size = _numpy(table.column("size_bytes"))
    if len(part_size) and part_size.min() < 0:
        raise BadInput(f"{path}: a partition has a negative size_bytes")
    check_total_bytes(part_size, np.diff(_numpy(replicas.offsets)), path)
    snap = Snapshot.build(
        meta["cluster"],
        broker_ids,
        meta["brokers"]["rack"],
        meta["topics"]["name"],
        _numpy(table.column("topic")),
        _numpy(replicas.offsets).astype(np.int64),
        np.zeros(0, np.int32),
        topic_internal=meta["topics"]["internal"],
        topic_keyed=meta["topics"]["keyed"],
        topic_retention_ms=meta["topics"].get("retention_ms"),
        part_size=part_size,
        part_rate=_numpy(table.column("bytes_in_per_sec")),
        limits=_limits_from({k: v for k, v in meta["limits"].items() if v is not None}, str(path)),
    )
    positions = snap.broker_positions(_numpy(replicas.values), str(path))
    return replace(snap, replica_broker=positions)
