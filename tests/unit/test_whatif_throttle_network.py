"""The what-if page's Replication throttle tab against the network (a new user's pass on
the demo): with N = 1000 B/s and a 50 MB/s throttle it said "Predicted ETA 2 min" and
"Suggested throttle 10.0 MB/s"; it wrote "outside on [1, 2, 3, 4, 5, 6, 7, 8, 9]"; it
took a throttle of 1e9 MB/s ("Predicted ETA 0 s") that /reassignments refuses; and it
asked for N in B/s beside a throttle in MB/s. N is in MB/s now, empty for the cluster's
configured network, and both fields get /reassignments' unit-slip check."""

from __future__ import annotations

import base64
import json
import sys

from tests.unit.test_plan_view import text_of
from tests.unit.test_throttle_units import app  # noqa: F401 (fixture: 'demo' 1 GbE, 'fast')


def page(path: str):
    import dash

    return sys.modules[next(p["module"] for p in dash.page_registry.values()
                            if p["path"] == path)]


# an uploaded plan moving three partitions onto the other brokers: all six take part (the
# generated cluster's balance plan only reorders two partitions' leaders, copying nothing)
PLAN = {"version": 1, "partitions": [
    {"topic": "topic-0", "partition": p, "replicas": r}
    for p, r in ((0, [4, 5, 6]), (1, [5, 6, 1]), (2, [6, 1, 2]))]}
UPLOAD = "data:application/json;base64," + base64.b64encode(json.dumps(PLAN).encode()).decode()


def cards(throttle_mb: str, capacity_mb: str | None, cluster: str = "demo") -> dict:
    """The throttle tab's cards by label, for PLAN."""
    summary, _band, _eta, _name, error, _ = page("/what-if").plan_throttle(
        throttle_mb, UPLOAD, capacity_mb, "plan.json", {"cluster": cluster})
    assert error == "", error
    return {text_of(c.children[0]): (text_of(c.children[1]), text_of(c.children[2:]))
            for c in summary}


def refusal(throttle_mb: str, capacity_mb: str | None, cluster: str = "demo") -> str:
    summary, _band, _eta, _name, error, _ = page("/what-if").plan_throttle(
        throttle_mb, None, capacity_mb, None, {"cluster": cluster})
    assert summary is None
    return error


def test_a_throttle_above_the_network_is_paced_by_the_network(app):  # noqa: F811
    capped = cards("50", "0.001")  # N = 1000 B/s
    at_network = cards("0.001", "0.001")
    assert capped["Predicted ETA"][0] == at_network["Predicted ETA"][0] != "2 min"
    assert capped["Predicted ETA"][1].startswith(
        "the throttle 50.0 MB/s is more than the network carries (0.001 MB/s): each broker "
        "copies at most 0.001 MB/s")
    suggested = capped["Suggested throttle"][0]
    assert suggested == "0.001 MB/s", suggested
    # a move that finishes: 5 GB/s on 1 GbE takes as long as 125 MB/s, which is all 1 GbE
    # carries, and longer than 5 GB/s would
    fast, gbe = cards("5000", None), cards("125", None)
    assert fast["Predicted ETA"][0] == gbe["Predicted ETA"][0] not in ("never", "0 s")
    assert fast["Predicted ETA"][1].startswith("the throttle 5,000.0 MB/s is more than the "
                                               "network carries (125.0 MB/s)")
    assert cards("5000", "5000")["Predicted ETA"][0] != gbe["Predicted ETA"][0]
    # on the cluster's 1 GbE a 50 MB/s throttle is reached: no such note
    assert "more than the network carries" not in cards("50", None)["Predicted ETA"][1]


def test_brokers_outside_the_safe_band_are_written_as_words(app):  # noqa: F811
    value = cards("50", "0.001")["Safe band"][0]
    assert value == "outside on brokers 1-6", value


def test_a_throttle_no_network_carries_is_refused_as_reassignments_refuses_it(app):  # noqa: F811
    error = refusal("1e9", None)
    assert error == ("throttle: 1,000,000,000 MB/s is 1,000 TB/s, more than a broker's "
                     "network carries (12.5 GB/s, 100 Gbit/s): the field is in MB/s "
                     "(1,000,000,000 B/s is 1 GB/s)")
    ra = page("/reassignments").preview(1, "generate", "drain", "1", 1.0, 1.1, None, "1e9",
                                        "?cluster=demo")
    assert ra[2] == error
    # a cluster whose config says its brokers carry more raises the bound, as there
    assert refusal("60000", None, "fast").endswith(
        "(50 GB/s, this cluster's network_capacity): the field is in MB/s (60,000 B/s is "
        "60 kB/s)")
    assert "Predicted ETA" in cards("20000", None, "fast")


def test_network_capacity_is_in_mb_and_bytes_typed_there_are_refused_saying_so(app):  # noqa: F811
    assert refusal("50", "125000000") == (
        "network capacity: 125,000,000 MB/s is 125 TB/s, more than a broker's network "
        "carries (12.5 GB/s, 100 Gbit/s): the field is in MB/s (125,000,000 B/s is 125 MB/s)")
    assert refusal("50", "-1").startswith("network capacity: give a number larger than 0 "
                                          "MB/s")
    # 125 MB/s is the 1 GbE the cluster's config gives when the field is empty
    assert cards("50", "125") == cards("50", None)
    # empty on 'fast' is its 50 GB/s: a 20 GB/s throttle is reached there, not at 1 GbE
    fast = cards("20000", None, "fast")["Predicted ETA"][1]
    assert "more than the network carries" not in fast
    assert "more than the network carries" in cards("20000", "125", "fast")["Predicted ETA"][1]


def test_the_form_asks_for_both_rates_in_mb(app):  # noqa: F811
    layout = text_of(page("/what-if").layout(cluster="demo", tab="throttle"))
    assert "Network capacity N (MB/s)" in layout and "(B/s)" not in layout
    assert "empty: this cluster's, 125 MB/s" in layout
