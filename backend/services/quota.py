"""Mutation quota questions: replay a workload of CreateTopics/CreatePartitions/DeleteTopics
requests through Kafka's KIP-599 token buckets.

Workloads are JSON Lines (docs/quota.md). A large one is parsed with pyarrow, so a
million requests load in well under a second; a small one (the CLI's usual) line by line
in Python, so `railyard quota replay` starts without pyarrow or pandas. Both read the
same columns and pass the same vectorised checks, which report the first offending line
by its number in the file.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from backend.engines import quota as engine
from backend.engines.quota import DEFAULT_SAMPLES, DEFAULT_WINDOW_SECONDS
from backend.errors import BadInput
from backend.model.bounds import MAX_INT, MAX_LONG
from backend.model.io import read_json
from backend.services import fields, uploads

if TYPE_CHECKING:
    import pandas as pd

OPS = ("create_topics", "create_partitions", "delete_topics")
RATE_KEY = "controller_mutation_rate"

# column -> the JSON types a value may have (null aside), as pyarrow's schema takes them
_TYPES: dict[str, tuple[type, ...]] = {
    "t": (int, float), "user": (str,), "client_id": (str,), "op": (str,),
    "partitions": (int,), "validate_only": (bool,)}
_REQUIRED = ("t", "user", "op", "partitions")
MAX_T = MAX_LONG / 1000
# Files up to this size are read in Python: below it, importing pyarrow costs more than
# parsing the lines (about 10k requests).
SMALL_FILE_BYTES = 1 << 20
Columns = dict[str, Any]  # numpy arrays; the strings of a large file are pandas Series


def load_requests(path: str | os.PathLike) -> pd.DataFrame:
    """The workload as a frame (t, user, client_id, op, partitions, validate_only)."""
    import pandas as pd

    return pd.DataFrame(load_columns(path))


def load_columns(path: str | os.PathLike, small_file_bytes: int = SMALL_FILE_BYTES
                 ) -> Columns:
    """The workload as columns (t, user, client_id, op, partitions, validate_only).

    client_id defaults to "" and validate_only to false; anything else wrong is
    BadInput naming the line. Files up to ``small_file_bytes`` are parsed in Python.
    """
    try:
        size = os.stat(path).st_size
    except FileNotFoundError:
        raise BadInput(f"{path}: no such requests file") from None
    except OSError as e:
        raise BadInput(f"{path}: cannot read ({e.strerror or e}), expected a requests "
                       "file") from None
    if os.path.isdir(path):
        raise BadInput(f"{path}: is a directory, expected a requests file")
    if size <= small_file_bytes or _first_record_is_null(path):
        columns, nulls, problem = _parse_lines(path)
        if problem:
            raise BadInput(problem)
    else:
        columns, nulls = _read_arrow(path)
    _validate(path, columns, nulls)
    return columns


def _read_arrow(path: str | os.PathLike) -> tuple[Columns, Columns]:
    """(columns, null masks of user, op and partitions); the strings stay pandas' arrow
    strings (a million Python str objects would cost more than the parse)."""
    import pyarrow as pa
    import pyarrow.json as pj

    schema = pa.schema([("t", pa.float64()), ("user", pa.string()),
                        ("client_id", pa.string()), ("op", pa.string()),
                        ("partitions", pa.int64()), ("validate_only", pa.bool_())])
    try:
        table = pj.read_json(path, parse_options=pj.ParseOptions(
            explicit_schema=schema, unexpected_field_behavior="ignore"))
        strings = table.select(["user", "client_id", "op"])
        strings.validate(full=True)  # the reader leaves bad UTF-8 for the first str() to find
        df = strings.to_pandas()
        partitions = table.column("partitions")
        columns = {"t": table.column("t").to_numpy().astype(np.float64),  # null: NaN
                   "user": df["user"], "client_id": df["client_id"].fillna(""),
                   "op": df["op"],
                   "partitions": partitions.fill_null(0).to_numpy().astype(np.int64),
                   "validate_only": table.column("validate_only").fill_null(False)
                   .to_numpy().astype(bool)}
        return columns, {"user": df["user"].isna().to_numpy(), "op": df["op"].isna().to_numpy(),
                         "partitions": partitions.is_null().to_numpy()}
    except (pa.ArrowException, UnicodeDecodeError):
        raise BadInput(_first_bad_line(path)) from None


def _first_record_is_null(path: str | os.PathLike) -> bool:
    """pyarrow's reader crashes the process on a file whose first record is `null`."""
    with open(path, "rb") as f:
        for line in f:
            if line.strip():
                return line.strip() == b"null"
    return False


def _parse_lines(path: str | os.PathLike) -> tuple[Columns, Columns, str | None]:
    """The requests as pyarrow reads them (a `null` line is a request of nulls, unknown
    keys are ignored), up to the first line pyarrow would refuse: (columns, null masks of
    user, op and partitions, what is wrong with that line or None)."""
    rows: dict[str, list] = {c: [] for c in _TYPES}
    problem = None
    try:
        with open(path, encoding="utf-8-sig") as f:  # pyarrow skips a byte-order mark
            for number, line in enumerate(f, start=1):
                if line.strip():
                    problem = _add_line(rows, line, f"{path}: line {number}")
                    if problem:
                        break
    except UnicodeDecodeError:
        problem = f"{path}: not a UTF-8 text file"
    if problem is None and not rows["t"] and os.path.getsize(path) == 0:
        problem = f"{path}: not a JSON Lines file of requests"  # pyarrow: "Empty JSON file"
    columns = {
        "t": np.array([math.nan if v is None else v for v in rows["t"]], dtype=np.float64),
        "user": np.array(rows["user"], dtype=object),
        "client_id": np.array(["" if v is None else v for v in rows["client_id"]], dtype=object),
        "op": np.array(rows["op"], dtype=object),
        "partitions": np.array([v or 0 for v in rows["partitions"]], dtype=np.int64),
        "validate_only": np.array([v is True for v in rows["validate_only"]], dtype=bool)}
    nulls = {k: np.array([v is None for v in rows[k]], dtype=bool)
             for k in ("user", "op", "partitions")}
    return columns, nulls, problem


def _add_line(rows: dict[str, list], line: str, where: str) -> str | None:
    """Append one line's request to ``rows``, or say why pyarrow would refuse it."""
    try:
        obj = json.loads(line, object_pairs_hook=_pairs, parse_float=_double)
    except json.JSONDecodeError as e:
        return f"{where}: invalid JSON: {e.msg}"
    except OverflowError:
        return f"{where}: invalid JSON: a number too big to be stored in a double"
    except _RepeatedKey as e:
        return f"{where}: '{e}' is given twice"
    if obj is None:
        obj = {}
    elif not isinstance(obj, dict):
        return f"{where}: expected a JSON object per line"
    values = [obj.get(key) for key in _TYPES]
    for key, kinds, value in zip(_TYPES, _TYPES.values(), values, strict=True):
        if value is not None and type(value) not in kinds:
            return f"{where}: '{key}' has the wrong type: {value!r}"
    t, partitions = values[0], values[4]
    if partitions is not None and not -MAX_LONG - 1 <= partitions <= MAX_LONG:
        return f"{where}: 'partitions' is past 2^63-1: {partitions}"
    if type(t) is int:  # as pyarrow reads an integer into a double: past 1e308 is infinite
        values[0] = float(t) if abs(t) < 1 << 1023 else math.inf if t > 0 else -math.inf
    for column, value in zip(rows.values(), values, strict=True):
        column.append(value)
    return None


class _RepeatedKey(ValueError):
    pass


def _double(text: str) -> float:
    """A JSON number as pyarrow reads it: 1e400 is an error, not infinity."""
    value = float(text)
    if math.isinf(value):
        raise OverflowError(text)
    return value


def _pairs(pairs: list[tuple[str, object]]) -> dict[str, object]:
    obj = dict(pairs)
    if len(obj) < len(pairs):
        seen: set[str] = set()
        raise _RepeatedKey(next(k for k, _ in pairs if k in seen or seen.add(k)))
    return obj


def _first_bad_line(path: str | os.PathLike) -> str:
    """Why pyarrow refused the file, line by line (only on the error path)."""
    return _parse_lines(path)[2] or f"{path}: not a JSON Lines file of requests"


def _validate(path: str | os.PathLike, c: Columns, nulls: Columns) -> None:
    """Refuse the first bad request. The string columns are numpy object arrays (small
    files) or pandas Series (pyarrow's); both compare to a string elementwise."""
    nulls = {"t": np.isnan(c["t"]), **nulls}
    for column in _REQUIRED:
        if nulls[column].any():
            _fail(path, nulls[column], f"missing or null '{column}'")
    t = c["t"]
    _check(path, ~(np.abs(t) <= MAX_T), "'t' must be a number of seconds within "
           f"+-{MAX_T:.3g} (Kafka's clock is a long of milliseconds)")
    earlier = np.zeros(len(t), dtype=bool)
    earlier[1:] = t[1:] < t[:-1]
    _check(path, earlier, "'t' is earlier than the previous request's (requests must be "
           "in time order)")
    known = np.zeros(len(t), dtype=bool)
    for op in OPS:
        known |= np.asarray(c["op"] == op)
    _check(path, ~known, f"unknown 'op' (expected one of {OPS})")
    _check(path, c["partitions"] < 0, "'partitions' must be >= 0")
    _check(path, c["partitions"] > MAX_INT,
           f"'partitions' is past Kafka's largest partition count ({MAX_INT:,})")
    _check(path, np.asarray(c["user"] == ""), "'user' must not be empty")


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
    c, out, bucket, buckets = _replayed(requests_path, rate, samples, window_seconds, mode,
                                        quotas_path)
    principals = _principal_rows(c, out, bucket, buckets)
    answer = {
        "burst": None if rate is None else engine.burst(rate, samples, window_seconds),
        "mode": mode,
        "requests": _request_rows(out),
        "principals": principals,
    }
    unquoted = [p for p in principals if p["rate"] is None]
    if unquoted:
        answer["unquoted"] = _unquoted(unquoted)
    return answer


def _unquoted(principals: list[dict]) -> dict:
    """What no quota entity covered (Kafka never throttles it), and why when the reason
    is an empty client.id: such a request is tagged (user, "") and Kafka then looks up
    /config/users/<user> and /config/users/<default> only (ClientQuotaManager's
    DefaultQuotaCallback.quotaLimit), never a user+client-id entity such as --rate's."""
    requests = sum(p["requests"] for p in principals)
    n = len(principals)
    note = (f"{requests:,} request{'s' * (requests != 1)} of {n:,} principal"
            f"{'s' * (n != 1)} match no quota entity: Kafka never throttles them")
    if any(p["client_id"] == "" and p["user"] != "" for p in principals):
        note += ("; a request without client_id is tagged (user, \"\"), and Kafka then looks "
                 "up /config/users/<user> and /config/users/<default> only, so a "
                 "user+client-id quota (--rate sets users/<default>/clients/<default>) does "
                 "not cover it: give the requests' client_id")
    return {"principals": len(principals), "requests": requests, "note": note}


def _replayed(requests_path: str | os.PathLike, rate: float | None, samples: int,
              window_seconds: int, mode: str, quotas_path: str | os.PathLike | None
              ) -> tuple[Columns, engine.Replay, np.ndarray, engine.Buckets]:
    """The workload's columns, its replay, each request's bucket and the buckets."""
    if rate is None and quotas_path is None:
        raise BadInput("give --rate, --quotas or both")
    book = load_quotas(quotas_path) if quotas_path else None
    c = load_columns(requests_path)
    out, bucket, buckets = engine.replay_requests(
        c["user"], c["client_id"], c["t"], c["partitions"], c["validate_only"], rate, samples,
        window_seconds, mode == "strict", book)
    return c, out, bucket, buckets


def _request_rows(out: engine.Replay) -> list[dict]:
    tokens = np.where(np.isnan(out.tokens_after), None, out.tokens_after).tolist()
    return [{"index": i, "admitted": a, "tokens_after": tk, "throttle_ms": th}
            for i, (a, tk, th) in enumerate(zip(out.admitted.tolist(), tokens,
                                                out.throttle_ms.tolist(), strict=True))]


def _principal_rows(c: Columns, out: engine.Replay, bucket: np.ndarray,
                    b: engine.Buckets) -> list[dict]:
    totals = engine.bucket_totals(c, {"bucket": bucket, "admitted": out.admitted,
                                      "throttle_ms": out.throttle_ms}, len(b.rate))
    rows = []
    for i, (rate, burst) in enumerate(zip(b.rate.tolist(), b.burst.tolist(), strict=True)):
        bounded = not math.isnan(rate)
        rows.append({
            "user": b.user[i], "client_id": b.client_id[i], "quota_entity": b.quota_entity[i],
            "rate": rate if bounded else None, "burst": burst if bounded else None,
            **{k: int(v[i]) for k, v in totals.items()},
        })
    return rows


def save_workload(contents: str, filename: str | None, directory: str,
                  max_bytes: int = uploads.DEFAULT_MAX_BYTES) -> str:
    """An uploaded workload written to a file the quota loaders read (line numbers kept)."""
    return uploads.save_text(contents, filename, directory, ".jsonl", max_bytes)


EXAMPLE_WORKLOAD = "config/examples/quota-workload.jsonl"  # replayed when none is uploaded


@contextlib.contextmanager
def workload_for_job(contents: str | None, filename: str | None, directory: str,
                     max_bytes: int = uploads.DEFAULT_MAX_BYTES) -> Iterator[tuple[str, str]]:
    """(file to read, its name for messages) while a job replays the what-if page's
    workload: the upload written for the job and deleted after it, however it ends (its
    errors name the user's file), or the example workload when nothing was uploaded."""
    if not contents:
        yield EXAMPLE_WORKLOAD, f"example workload {EXAMPLE_WORKLOAD}"
        return
    path = save_workload(contents, filename, directory, max_bytes)
    with uploads.kept_for_job(path, filename):
        yield path, filename or "upload"


def whatif(requests_path: str, rate: object, samples: object = DEFAULT_SAMPLES,
           window_seconds: object = DEFAULT_WINDOW_SECONDS) -> dict:
    """Replay a workload through KIP-599 strict token buckets: who is rejected, and when.
    ``curve``: each principal's tokens over time (engines.quota.token_curve); ``rejected``:
    the requests refused, at the tokens they found; ``bursts``: each principal's burst.
    The numbers come as typed and are read here (the window configs are Kafka INTs)."""
    rate = fields.number(rate, "rate", above=0, required=True,
                         unit="partitions/s (controller_mutation_rate)")
    samples = fields.number(samples, "samples", low=1, limit=MAX_INT, whole=True,
                            required=True)
    window_seconds = fields.number(window_seconds, "window", low=1, limit=MAX_INT, whole=True,
                                   required=True, unit="s")
    if not math.isfinite(engine.burst(rate, samples, window_seconds)):
        raise BadInput(f"rate: {rate:g} partitions/s x {samples} samples x {window_seconds} s "
                       "is a burst past the largest number")
    import pandas as pd

    c, out, bucket, buckets = _replayed(requests_path, rate, samples, window_seconds,
                                        "strict", None)
    names = np.array([u if not cl else f"{u}/{cl}"
                      for u, cl in zip(buckets.user, buckets.client_id, strict=True)], dtype=object)
    t, b, tokens = engine.token_curve(c["t"], bucket, out.tokens_after, buckets.rate,
                                      buckets.burst)
    refused = np.flatnonzero(~out.admitted)
    return {"burst": engine.burst(rate, samples, window_seconds),
            "principals": _principal_rows(c, out, bucket, buckets),
            "bursts": dict(zip(names.tolist(), buckets.burst.tolist(), strict=True)),
            "curve": pd.DataFrame({"t": t, "principal": names[b], "tokens": tokens}),
            "rejected": pd.DataFrame({"t": np.asarray(c["t"])[refused],
                                      "principal": names[bucket[refused]],
                                      "tokens": out.tokens_after[refused]})}
