"""The plan store writes JSON columns with orjson where that reads back exactly what the
json module's text would, and with the json module everywhere else."""

from __future__ import annotations

import json

import pytest

from backend.store.engine import json_dumps


@pytest.mark.parametrize("value", [
    {"version": 1, "partitions": [{"topic": "orders", "partition": 0, "replicas": [3, 4],
                                   "log_dirs": ["any", "any"]}]},
    {"eta_seconds": 12.5, "tiny": 1e-7, "huge": 1e16, "zero": -0.0, "limit": None},
    {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf")},
    {"big": 2 ** 70, "small": -(2 ** 63)},
    {1: "int key", "note": "ünïcode ✓ \u2028 \x1f \x7f \"quoted\" \\"},
    [True, False, None, [], {}],
])
def test_what_is_read_back_is_what_the_json_module_would_give(value):
    assert repr(json.loads(json_dumps(value))) == repr(json.loads(json.dumps(value)))


def test_a_plain_plan_is_written_by_orjson_compactly():
    content = {"version": 1, "partitions": [{"topic": "t", "partition": 1, "replicas": [1]}]}
    assert json_dumps(content) == '{"version":1,"partitions":[{"topic":"t","partition":1,' \
                                  '"replicas":[1]}]}'


def test_what_neither_can_write_is_refused_as_before():
    with pytest.raises(TypeError):
        json_dumps({"at": object()})
