"""The reassignments page's throttle is in MB/s while Kafka's configs, --throttle and the
API count bytes/s: 2000000 typed from habit (2 MB/s in bytes) previewed "at a throttle of
2e+03 GB/s (given)", "Predicted ETA 3 s". A rate no broker's network carries is refused
in one line saying what was probably meant."""

from __future__ import annotations

import sys

import pytest

from backend.twin.cluster import TwinCluster
from backend.twin.gateway import TwinGateway
from backend.twin.generate import generate_snapshot
from dashboard.config import parse_config


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    """Two clusters: 'demo' says nothing of its network, 'fast' has 400 Gbit/s brokers."""
    from dashboard.app import create_app

    tmp = tmp_path_factory.mktemp("units")
    gateways = {name: TwinGateway(TwinCluster(generate_snapshot(6, 3, 3, 30, 3, seed=7,
                                                                cluster=name)))
                for name in ("demo", "fast")}
    twin = {"type": "twin", "url": "http://127.0.0.1:9"}
    app = create_app(parse_config({
        "clusters": [{"name": "demo", "gateway": twin},
                     {"name": "fast", "gateway": twin,
                      "adaptive_throttle": {"network_capacity": 50e9}}],
        "cache": {"background_dir": str(tmp / "cache")},
        "store": {"url": f"sqlite:///{tmp / 'railyard.db'}",
                  "audit_key_file": str(tmp / "audit_keys")}}, "cfg"), gateways=gateways)
    with app.server.test_request_context("/"):  # callbacks ask who is signed in
        yield app


def preview(throttle_mb: str, cluster: str = "demo") -> tuple:
    """The page's answer to Preview draining broker 1 at ``throttle_mb`` as typed."""
    import dash

    page = sys.modules[next(p["module"] for p in dash.page_registry.values()
                            if p["path"] == "/reassignments")]
    block, token, error, _ = page.preview(1, "generate", "drain", "1", 1.0, 1.1, None,
                                          throttle_mb, f"?cluster={cluster}")
    return block, token, error


def test_bytes_per_second_typed_into_the_mb_field_is_refused_saying_so(app):
    block, token, error = preview("2000000")
    assert (block, token) == (None, None)
    assert error == ("throttle: 2,000,000 MB/s is 2 TB/s, more than a broker's network "
                     "carries (12.5 GB/s, 100 Gbit/s): the field is in MB/s (2,000,000 B/s "
                     "is 2 MB/s)")
    assert "\n" not in error
    _, _, error = preview("12500.5")  # just past 100 Gbit/s
    assert error.startswith("throttle: 12,500.5 MB/s is 12.5 GB/s, more than a broker's")
    assert error.endswith("(12,500.5 B/s is 12.5 kB/s)")


def test_a_rate_a_network_carries_is_previewed(app):
    for typed in ("12500", "125", "0.5"):
        block, token, error = preview(typed)
        assert error == "" and token is not None and block is not None, typed


def test_a_cluster_with_faster_brokers_raises_the_bound(app):
    """adaptive_throttle.network_capacity says what the cluster's brokers carry; more
    than 100 Gbit/s is believed for that cluster (a smaller one does not lower the bound:
    it is 1 GbE by default, said or not)."""
    block, token, error = preview("20000", "fast")
    assert error == "" and token is not None and block is not None
    _, _, error = preview("60000", "fast")
    assert error == ("throttle: 60,000 MB/s is 60 GB/s, more than a broker's network carries "
                     "(50 GB/s, this cluster's network_capacity): the field is in MB/s "
                     "(60,000 B/s is 60 kB/s)")
