"""A reassignment's preview uses the cluster's configured network capacity
(adaptive_throttle.network_capacity), on the page and through the API: a cluster of 10 GbE
brokers was previewed at the engine's 1 GbE default, so the safe band's top and the
suggested throttle (which Propose freezes when none is given) were 1 GbE's. A cluster whose
config says nothing stays at 1 GbE. Expectations come from the throttle engine at the
capacity, not from figures written here."""

from __future__ import annotations

import sys

import dash
import pytest

from backend.engines import throttle as throttle_engine
from backend.model.reassignment import reassignment_from_dict
from backend.model.snapshot import Snapshot
from backend.twin.cluster import TwinCluster
from backend.twin.gateway import TwinGateway
from backend.twin.generate import generate_snapshot
from dashboard.config import parse_config
from tests.unit.test_plan_view import text_of

TEN_GBE = 1.25e9  # bytes/s
CONFIGURED = {"fast": TEN_GBE, "demo": throttle_engine.DEFAULT_NETWORK_CAPACITY}


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    """Two twin clusters: 'demo' says nothing of its network, 'fast' has 10 GbE brokers."""
    from dashboard.app import create_app

    tmp = tmp_path_factory.mktemp("network")
    gateways = {name: TwinGateway(TwinCluster(generate_snapshot(6, 3, 3, 30, 3, seed=7,
                                                                cluster=name)))
                for name in CONFIGURED}
    twin = {"type": "twin", "url": "http://127.0.0.1:9"}
    app = create_app(parse_config({
        "clusters": [{"name": "demo", "gateway": twin},
                     {"name": "fast", "gateway": twin,
                      "adaptive_throttle": {"network_capacity": TEN_GBE}}],
        "cache": {"background_dir": str(tmp / "cache")},
        "store": {"url": f"sqlite:///{tmp / 'railyard.db'}",
                  "audit_key_file": str(tmp / "audit_keys")}}, "cfg"), gateways=gateways)
    return app


def snapshot(cluster: str) -> Snapshot:
    """The cluster as the page and the API read it (their drafts are computed on it)."""
    from dashboard import runtime

    return runtime.current().snapshot_of(cluster)


def engine_figures(snap: Snapshot, plan: dict, capacity: float) -> tuple[float, float]:
    """(suggested throttle, safe band top over the brokers that move) the throttle engine
    gives ``plan`` on a network of ``capacity``."""
    figures = throttle_engine.plan_throttle(
        snap, reassignment_from_dict(plan, snap),
        throttle_engine.ThrottleParams(1.0, capacity), replica_lists=False).to_dict()
    return (figures["suggested_throttle"],
            min(b["safe_band"]["high"] for b in figures["brokers"]))


def one_move(snap: Snapshot) -> dict:
    """Partition 0 of the first topic onto the brokers that do not hold it."""
    topic = str(snap.topic_names[0])
    replicas = snap.replicas_of(snap.partition_row(topic, 0))
    spare = [b for b in map(int, snap.broker_ids) if b not in replicas]
    return {"version": 1, "partitions": [
        {"topic": topic, "partition": 0, "replicas": spare[:len(replicas)]}]}


def assert_previewed_at(preview: dict, snap: Snapshot, plan: dict, capacity: float) -> None:
    suggested, top = engine_figures(snap, plan, capacity)
    assert preview["network_capacity"] == capacity
    assert preview["throttle_source"].startswith("suggested")
    assert preview["throttle"] == suggested
    assert preview["safe_band"]["high"] == pytest.approx(top)


@pytest.mark.parametrize("cluster", ["fast", "demo"])
def test_the_api_previews_and_freezes_at_the_configured_capacity(app, cluster):
    client = app.server.test_client()
    snap = snapshot(cluster)
    plan = one_move(snap)
    answer = client.post("/api/v1/plans", json={"cluster": cluster, "kind": "reassignment",
                                                "plan": plan})
    assert answer.status_code == 201, answer.get_json()
    preview = answer.get_json()["preview"]
    assert_previewed_at(preview, snap, plan, CONFIGURED[cluster])
    stored = client.get(f"/api/v1/plans/{answer.get_json()['id']}").get_json()
    assert stored["throttle"] == preview["throttle"]  # the approver approves what they read


def test_ten_gbe_is_not_one_gbe(app):
    """The two capacities give different figures here (else the tests above prove
    nothing)."""
    snap = snapshot("fast")
    assert engine_figures(snap, one_move(snap), TEN_GBE) != \
        engine_figures(snap, one_move(snap), CONFIGURED["demo"])


@pytest.mark.parametrize("cluster", ["fast", "demo"])
def test_the_page_previews_at_the_configured_capacity_and_says_where_it_came_from(app,
                                                                                 cluster):
    from components.charts import rate_text
    from dashboard import drafts

    page = sys.modules[next(p["module"] for p in dash.page_registry.values()
                            if p["path"] == "/reassignments")]
    with app.server.test_request_context("/"):  # callbacks ask who is signed in
        block, token, error, _ = page.preview(1, "generate", "drain", "1", 1.0, 1.1, None,
                                              None, f"?cluster={cluster}")
        draft = drafts.load(token)
    assert error == "" and draft is not None
    assert_previewed_at(draft.preview, snapshot(cluster), draft.content, CONFIGURED[cluster])
    shown = " ".join(text_of(block).split())  # text_of joins a term and its text with " "
    assert f"Network capacity {rate_text(CONFIGURED[cluster])} per broker" in shown
    assert "from this cluster's config (adaptive_throttle.network_capacity" in shown


def test_the_stored_plans_page_says_which_capacity_its_safe_band_assumed(app):
    """The plan page of a plan proposed on the 10 GbE cluster says so beside its safe
    band (the approver reads the throttle suggested for that network)."""
    from components.charts import rate_text

    made = app.server.test_client().post("/api/v1/plans", json={
        "cluster": "fast", "kind": "reassignment", "plan": one_move(snapshot("fast"))})
    assert made.status_code == 201, made.get_json()
    page = sys.modules[next(p["module"] for p in dash.page_registry.values()
                            if p["path_template"] == "/plans/<plan_id>")]
    with app.server.test_request_context("/"):
        shown = " ".join(text_of(page.layout(str(made.get_json()["id"]))).split())
    assert f"brokers of {rate_text(TEN_GBE)} each way" in shown
