"""emit: orjson output parses to what json.dumps gave, and a NaN is still refused."""

from __future__ import annotations

import json

import numpy as np
import pytest

from backend.cli import _json_default, emit


def _both(result, capsys):
    emit(result)
    out = capsys.readouterr().out
    assert out.endswith("\n") and out.count("\n") == 1
    return json.loads(out), json.loads(json.dumps(result, default=_json_default))


@pytest.mark.parametrize("result", [
    {"ok": True, "assignment": {"0": [1, 2, 3], "1": [2, 3, 1]}, "error": None},
    {"counts": np.arange(5, dtype=np.int64), "rates": np.array([0.5, 1.25]),
     "scalar": np.int32(7), "flag": np.bool_(True), "x": np.float64(0.1)},
    {"strided": np.arange(12).reshape(3, 4)[:, ::2], "tuple": (1, "a", None)},
    {1: "int key", "big": 2**70, "nested": [[{"f": 1.5}]]},
    {"text": "é ✓ \u2028", "neg": -0.0, "tiny": 5e-324, "long": 2**63 - 1},
])
def test_same_json_as_json_dumps(result, capsys):
    got, want = _both(result, capsys)
    assert got == want


@pytest.mark.parametrize("bad", [
    {"x": float("nan")},
    {"rows": {"0": [1, 2], "1": [3, float("inf")]}},
    {"deep": [[{"f": [float("-inf")]}]]},
    {"arr": np.array([1.0, np.nan])},
    {"scalar": np.float64("nan")},
])
def test_nan_is_never_emitted(bad, capsys):
    with pytest.raises(ValueError):
        emit(bad)
    assert capsys.readouterr().out == ""
