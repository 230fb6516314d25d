"""IndexedRows: a partition assignment kept as arrays reads like the dict it stands for,
and writes the same JSON text orjson writes for that dict."""

from __future__ import annotations

import json

import numpy as np
import orjson
import pytest

from backend.cli import emit
from backend.engines import limits as engine
from backend.model.jsonrows import IndexedRows
from backend.twin.generate import generate_snapshot


def _as_dict(first, positions, ids):
    return {str(first + i): [int(ids[p]) for p in row] for i, row in enumerate(positions)}


@pytest.mark.parametrize("first,positions,ids", [
    (0, [[0, 1, 2]], [1, 2, 3]),
    (5, [[0, 1, 2], [2, 1, 0]], [0, 10, 9]),  # broker id 0 prints as "0"
    (99, [[0], [1], [2]], [1, 22, 333]),  # keys grow a digit: 99, 100, 101
    (9, [[0, 1]], [0, 100]),
    (0, np.zeros((0, 3), dtype=np.int64), [1, 2, 3]),  # no partitions: {}
    (3, [[0, 1]], [-1, 5]),  # negative ids take the plain path
    (2**40, [[1, 0]], [2**40, 7]),  # past 32 bits
])
def test_same_json_as_the_dict(first, positions, ids):
    rows = IndexedRows(first, np.array(positions, dtype=np.int64), np.array(ids))
    want = _as_dict(first, positions, ids)
    assert rows == want and want == rows and dict(rows) == want
    assert rows.json_bytes() == orjson.dumps(want)


def test_random_rows_match():
    rng = np.random.default_rng(16)
    for _ in range(20):
        ids = np.sort(rng.choice(100_000, size=rng.integers(1, 50), replace=False))
        n, k = int(rng.integers(1, 3_000)), int(rng.integers(1, 6))
        positions = rng.integers(0, len(ids), size=(n, k))
        first = int(rng.integers(0, 10**7))
        rows = IndexedRows(first, positions, ids)
        assert rows.json_bytes() == orjson.dumps(_as_dict(first, positions, ids))


def test_lookup_is_the_dicts():
    rows = IndexedRows(10, np.array([[0, 1], [1, 0]]), np.array([4, 7]))
    assert rows["11"] == [7, 4] and list(rows) == ["10", "11"] and len(rows) == 2
    for missing in ("9", "12", "010", "x", 10):
        assert missing not in rows
        with pytest.raises(KeyError):
            rows[missing]


def test_compact_answer_emits_the_plain_answers_json(capsys):
    """The CLI's compact create-topics answer prints what the dict answer prints."""
    snap = generate_snapshot(12, 3, 4, 200, 3, seed=3)
    result = engine.create_topics(snap, [engine.TopicRequest("a", 500, 3),
                                         engine.TopicRequest("b", 7, 2)], snap.limits, seed=1)
    emit(result.to_dict(compact=True))
    compact = capsys.readouterr().out
    emit(result.to_dict())
    assert compact == capsys.readouterr().out
    assert json.loads(compact)["topics"][1]["assignment"]["6"] == \
        result.to_dict()["topics"][1]["assignment"]["6"]


def test_json_fallback_writes_the_rows_too(capsys):
    """Past 64 bits orjson gives up and json writes the answer: the rows as a dict."""
    rows = IndexedRows(0, np.array([[1, 0]]), np.array([3, 4]))
    emit({"big": 2**70, "assignment": rows})
    assert json.loads(capsys.readouterr().out) == {"big": 2**70, "assignment": {"0": [4, 3]}}
