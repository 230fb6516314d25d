"""Mutation quota questions: replay a workload of CreateTopics/CreatePartitions/DeleteTopics
requests through Kafka's KIP-599 token buckets.

Workloads are JSON Lines (docs/quota.md); they are parsed with pyarrow so a million
requests load in well under a second, and every check is vectorised and reports the
first offending line by its number in the file.
"""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.json as pj

from backend.engines import quota as engine
from backend.engines.quota import DEFAULT_SAMPLES, DEFAULT_WINDOW_SECONDS
from backend.errors import BadInput
from backend.model.bounds import MAX_LONG
from backend.model.io import read_json
from backend.services import uploads

OPS = ("create_topics", "create_partitions", "delete_topics")
RATE_KEY = "controller_mutation_rate"

_SCHEMA = pa.schema([("t", pa.float64()), ("user", pa.string()), ("client_id", pa.string()),
                     ("op", pa.string()), ("partitions", pa.int64()),
                     ("validate_only", pa.bool_())])
_REQUIRED = ("t", "user", "op", "partitions")
MAX_T = MAX_LONG / 1000
MAX_INT32 = 2**31 - 1


def load_requests(path: str | os.PathLike) -> pd.DataFrame:
    """The workload as a frame (t, user, client_id, op, partitions, validate_only).

    client_id defaults to "" and validate_only to false; anything else wrong is
    BadInput naming the line.
    """
    try:
        table = pj.read_json(path, parse_options=pj.ParseOptions(
            explicit_schema=_SCHEMA, unexpected_field_behavior="ignore"))
    except FileNotFoundError:
        raise BadInput(f"{path}: no such requests file") from None
    except (pa.ArrowInvalid, UnicodeDecodeError):
        raise BadInput(_first_bad_line(path)) from None
    except OSError as e:  # pyarrow says "Expected file path" for a folder
        what = "is a directory" if os.path.isdir(path) else f"cannot read ({e.strerror or e})"
        raise BadInput(f"{path}: {what}, expected a requests file") from None
    df = table.to_pandas()
    for column in _REQUIRED:
        missing = df[column].isna().to_numpy()
        if missing.any():
            _fail(path, missing, f"missing or null '{column}'")
    df["client_id"] = df["client_id"].fillna("")
    df["validate_only"] = df["validate_only"].fillna(False).astype(bool)
    t = df["t"].to_numpy()
    _check(path, ~(np.abs(t) <= MAX_T), "'t' must be a number of seconds within "
           f"+-{MAX_T:.3g} (Kafka's clock is a long of milliseconds)")
    earlier = np.zeros(len(t), dtype=bool)
    earlier[1:] = t[1:] < t[:-1]
    _check(path, earlier, "'t' is earlier than the previous request's (requests must be "
           "in time order)")
    _check(path, ~df["op"].isin(OPS).to_numpy(), f"unknown 'op' (expected one of {OPS})")
    _check(path, df["partitions"].to_numpy() < 0, "'partitions' must be >= 0")
    _check(path, df["partitions"].to_numpy() > MAX_INT32,
           f"'partitions' is past Kafka's largest partition count ({MAX_INT32:,})")
    _check(path, (df["user"] == "").to_numpy(), "'user' must not be empty")
    return df


def _check(path: str | os.PathLike, bad: np.ndarray, what: str) -> None:
    if bad.any():
        _fail(path, bad, what)


def _fail(path: str | os.PathLike, bad: np.ndarray, what: str) -> None:
    row = int(np.argmax(bad))
    raise BadInput(f"{path}: line {_line_of_row(path, row)}: {what}")


def _line_of_row(path: str | os.PathLike, row: int) -> int:
    """File line of the row-th request (blank lines hold no request)."""
    with open(path, encoding="utf-8") as f:
        seen = -1
        for number, line in enumerate(f, start=1):
            if line.strip():
                seen += 1
                if seen == row:
                    return number
    return row + 1


def _first_bad_line(path: str | os.PathLike) -> str:
    """Find why pyarrow refused the file, line by line (only on the error path)."""
    types = {"t": (int, float), "user": str, "client_id": str, "op": str, "partitions": int,
             "validate_only": bool}
    try:
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, start=1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as e:
                    return f"{path}: line {number}: invalid JSON: {e.msg}"
                if not isinstance(obj, dict):
                    return f"{path}: line {number}: expected a JSON object per line"
                for key, kind in types.items():
                    value = obj.get(key)
                    if value is not None and (not isinstance(value, kind) or (
                            isinstance(value, bool) and kind is not bool)):
                        return f"{path}: line {number}: '{key}' has the wrong type: {value!r}"
                    if isinstance(value, int) and not -MAX_LONG - 1 <= value <= MAX_LONG:
                        return f"{path}: line {number}: '{key}' is past 2^63-1: {value}"
    except UnicodeDecodeError:
        return f"{path}: not a UTF-8 text file"
    return f"{path}: not a JSON Lines file of requests"


def load_quotas(path: str | os.PathLike) -> engine.QuotaBook:
    """QUOTAS.json: {"quotas": [{"user": .., "client_id": .., "controller_mutation_rate": R}]}."""
    doc = read_json(path, "quotas file")
    entries = doc.get("quotas") if isinstance(doc, dict) else None
    if not isinstance(entries, list):
        raise BadInput(f'{path}: expected {{"quotas": [...]}}')
    quotas: dict[engine.Entity, float] = {}
    for i, entry in enumerate(entries):
        where = f"{path}: quotas[{i}]"
        if not isinstance(entry, dict):
            raise BadInput(f"{where}: expected an object")
        unknown = set(entry) - {"user", "client_id", RATE_KEY}
        if unknown:
            raise BadInput(f"{where}: unknown key(s) {sorted(unknown)}")
        user, client = entry.get("user"), entry.get("client_id")
        for key, name in (("user", user), ("client_id", client)):
            if name is not None and not (isinstance(name, str) and name):
                raise BadInput(f"{where}: '{key}' must be a non-empty string, "
                               f"\"{engine.DEFAULT}\" or null")
        if user is None and client is None:
            raise BadInput(f"{where}: needs a 'user', a 'client_id' or both")
        rate = entry.get(RATE_KEY)
        if isinstance(rate, bool) or not isinstance(rate, int | float) \
                or not (rate > 0 and math.isfinite(rate)):
            raise BadInput(f"{where}: '{RATE_KEY}' must be a positive number")
        if (user, client) in quotas:
            raise BadInput(f"{where}: {engine.entity_path((user, client))} is set twice")
        quotas[(user, client)] = float(rate)
    return engine.QuotaBook(quotas)


def replay(requests_path: str | os.PathLike, rate: float | None, samples: int,
           window_seconds: int, mode: str, quotas_path: str | os.PathLike | None) -> dict:
    """The `railyard quota replay` answer: per request and per principal (quota bucket)."""
    if rate is None and quotas_path is None:
        raise BadInput("give --rate, --quotas or both")
    book = load_quotas(quotas_path) if quotas_path else None
    requests = load_requests(requests_path)
    per_request, buckets = engine.replay_frame(requests, rate, samples, window_seconds,
                                               mode == "strict", book)
    return {
        "burst": None if rate is None else engine.burst(rate, samples, window_seconds),
        "mode": mode,
        "requests": _request_rows(per_request),
        "principals": _principal_rows(requests, per_request, buckets),
    }


def _request_rows(per_request: pd.DataFrame) -> list[dict]:
    tokens = per_request["tokens_after"].to_numpy()
    tokens_out = np.where(np.isnan(tokens), None, tokens).tolist()
    return [{"index": i, "admitted": a, "tokens_after": tk, "throttle_ms": th}
            for i, (a, tk, th) in enumerate(zip(per_request["admitted"].tolist(), tokens_out,
                                                per_request["throttle_ms"].tolist(),
                                                strict=True))]


def _principal_rows(requests: pd.DataFrame, per_request: pd.DataFrame,
                    buckets: pd.DataFrame) -> list[dict]:
    totals = engine.bucket_totals(requests, per_request, len(buckets))
    rows = []
    for i, row in enumerate(buckets.itertuples(index=False)):
        bounded = not math.isnan(row.rate)
        rows.append({
            "user": row.user, "client_id": row.client_id,
            "quota_entity": row.quota_entity,
            "rate": row.rate if bounded else None, "burst": row.burst if bounded else None,
            **{k: int(v[i]) for k, v in totals.items()},
        })
    return rows


def save_workload(contents: str, filename: str | None, directory: str,
                  max_bytes: int = uploads.DEFAULT_MAX_BYTES) -> str:
    """An uploaded workload written to a file the quota loaders read (line numbers kept)."""
    return uploads.save_text(contents, filename, directory, ".jsonl", max_bytes)


def whatif(requests_path: str, rate: float | None, samples: int = DEFAULT_SAMPLES,
           window_seconds: int = DEFAULT_WINDOW_SECONDS) -> dict:
    """Replay a workload through KIP-599 strict token buckets: who is rejected, and when."""
    if rate is None or not rate > 0:
        raise BadInput("rate: give the controller_mutation_rate in partitions/s (> 0)")
    requests = load_requests(requests_path)
    answer = replay(requests_path, rate, samples, window_seconds, "strict", None)
    per_request = pd.DataFrame(answer["requests"])
    principal = requests["user"].where(requests["client_id"] == "",
                                       requests["user"] + "/" + requests["client_id"])
    series = pd.DataFrame({"t": requests["t"], "principal": principal,
                           "tokens": per_request["tokens_after"],
                           "admitted": per_request["admitted"]})
    return {"burst": answer["burst"], "principals": answer["principals"],
            "series": series.dropna(subset=["tokens"])}
