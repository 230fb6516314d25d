"""One cache per kind of answer: one key scheme, one lifetime, failures never kept."""

from __future__ import annotations

import pytest

from backend.cache import LocalStore, TtlCache
from backend.errors import BadInput
from dashboard.config import parse_config


def test_an_answer_is_kept_for_its_lifetime_and_failures_are_not():
    calls = []

    def compute(value):
        calls.append(value)
        return value

    cache = TtlCache("metrics", ttl=60)
    assert cache.fetch(("a", 1), lambda: compute("x")) == "x"
    assert cache.fetch(("a", 1), lambda: compute("y")) == "x"  # kept
    assert cache.fetch(("a", 2), lambda: compute("z")) == "z"  # another question
    assert calls == ["x", "z"]
    assert cache.key("a", 1).startswith("metrics:")

    def fail():
        raise RuntimeError("down")

    with pytest.raises(RuntimeError):
        cache.fetch(("b",), fail)
    assert cache.fetch(("b",), lambda: compute("up")) == "up"  # the failure was not kept


def test_no_lifetime_keeps_nothing_and_the_local_store_is_bounded():
    cache = TtlCache("metrics", ttl=0)
    answers = iter([1, 2])
    assert cache.fetch(("q",), lambda: next(answers)) == 1
    assert cache.fetch(("q",), lambda: next(answers)) == 2
    store = LocalStore(max_entries=2)
    for k in "abc":
        store.set(k, k, timeout=60)
    assert [store.get(k) for k in "abc"] == [None, "b", "c"]  # the oldest went


def test_near_limit_ratio_is_configured_once():
    doc = {"clusters": [{"name": "a", "gateway": {"type": "twin",
                                                  "url": "http://127.0.0.1:9"}}]}
    assert parse_config(doc).near_limit_ratio == 0.9
    assert parse_config({**doc, "near_limit_ratio": 0.8}).near_limit_ratio == 0.8
    with pytest.raises(BadInput, match="near_limit_ratio: expected a share"):
        parse_config({**doc, "near_limit_ratio": 1.5})
