"""Reassignments: Propose freezes the throttle the operator previewed, in whole bytes/s,
the figure the preview's kafka-reassign-partitions command carries, even when the cluster's
traffic moved between Preview and Propose (a fresh snapshot would suggest another rate);
the plan's preview still says the figure was suggested, and a figure outside the KIP-73
safe band is frozen with that risk, not replaced."""

from __future__ import annotations

import re
import sys
from dataclasses import replace

import pytest

from backend.services import plan_preview
from backend.services import plans as plan_service
from backend.twin.cluster import TwinCluster
from backend.twin.gateway import TwinGateway
from backend.twin.generate import generate_snapshot
from dashboard import drafts
from dashboard.config import parse_config
from tests.unit.test_plan_view import text_of


class TrafficGateway(TwinGateway):
    """The twin's assignment with its write rates times ``traffic``: the rates a live
    cluster's snapshot carries (Prometheus') change between two reads."""

    traffic = 1.0

    def assignment(self):
        snap = super().assignment()
        return replace(snap, part_rate=snap.part_rate * self.traffic)


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    from dashboard import runtime
    from dashboard.app import create_app

    tmp = tmp_path_factory.mktemp("previewed")
    twin = TwinCluster(generate_snapshot(6, 3, 3, 30, 3, seed=7, cluster="demo"))
    gateway = TrafficGateway(twin)
    app = create_app(parse_config({
        "clusters": [{"name": "demo", "gateway": {"type": "twin",
                                                  "url": "http://127.0.0.1:9"}}],
        "cache": {"background_dir": str(tmp / "cache")},
        "store": {"url": f"sqlite:///{tmp / 'railyard.db'}",
                  "audit_key_file": str(tmp / "audit_keys")}}, "cfg"),
        gateways={"demo": gateway})
    with app.server.test_request_context("/"):  # callbacks ask who is signed in
        yield {"app": app, "gateway": gateway, "rt": runtime.current()}


@pytest.fixture(autouse=True)
def calm(env):
    env["gateway"].traffic = 1.0
    yield
    env["gateway"].traffic = 1.0


def reassignments():
    """The page module as Dash imported it (importing it again registers it twice)."""
    import dash

    return sys.modules[next(p["module"] for p in dash.page_registry.values()
                            if p["path"] == "/reassignments")]


def preview(throttle_mb=None) -> tuple[plan_preview.Draft, str, int | None]:
    """Preview draining broker 1 at ``throttle_mb`` (None: the suggested rate): the draft
    the page holds, its token and the throttle its command line shows."""
    block, token, error, notes = reassignments().preview(
        1, "generate", "drain", "1", 1.0, 1.1, None, throttle_mb, "?cluster=demo")
    assert error == "" and notes == []
    shown = re.findall(r"--throttle (\d+)", text_of(block))
    return drafts.load(token), token, int(shown[0]) if shown else None


def propose(env, token: str) -> plan_service.Plan:
    from dashboard import plan_views

    href, error = plan_views.propose(1, token, "")
    assert error == "", error
    return plan_service.get(env["rt"].plan_store(), int(href.rsplit("/", 1)[1]))


def test_the_suggested_throttle_is_frozen_as_previewed_when_the_traffic_moved(env):
    draft, token, command = preview()
    p = draft.preview
    assert p["throttle_source"].startswith("suggested")
    assert command == p["throttle"]
    env["gateway"].traffic = 40.0  # the cluster a fresh snapshot reads now writes 40x
    fresh = env["rt"].snapshot_of("demo")
    again = plan_preview.from_goal(fresh, {"goal": "drain", "brokers": [1]}).preview
    assert again["throttle"] != p["throttle"]  # what a preview now would suggest
    plan = propose(env, token)
    assert plan.throttle == command == p["throttle"]
    # the preview frozen with it is the one shown: suggested, on the snapshot then
    assert plan.preview["throttle"] == p["throttle"]
    assert plan.preview["throttle_source"] == p["throttle_source"]
    assert plan.preview["safe_band"] == p["safe_band"]


def test_a_typed_throttle_is_frozen_in_the_whole_bytes_its_command_shows(env):
    """12.3456789 MB/s previewed "--throttle 12345678" and froze 12345679."""
    draft, token, command = preview("12.3456789")
    assert draft.preview["throttle"] == command == 12_345_679
    assert propose(env, token).throttle == command


def test_a_throttle_too_small_for_one_byte_is_one_byte_not_refused_at_propose(env):
    """0.0000001 MB/s (0.1 B/s) previewed, then Propose froze round(0.1) = 0: refused."""
    draft, token, command = preview("0.0000001")
    assert draft.preview["throttle"] == command == 1
    assert propose(env, token).throttle == 1


def test_a_previewed_throttle_outside_the_safe_band_is_frozen_with_that_risk(env):
    """Above N - IN/R on every broker that moves (1 GbE: 125 MB/s): the plan keeps the
    figure the operator chose and says it is outside, as the preview did."""
    draft, token, command = preview("124.99")
    p = draft.preview
    assert p["outside_safe_band"] and command == p["throttle"] == 124_990_000
    plan = propose(env, token)
    assert plan.throttle == 124_990_000
    assert plan.preview["outside_safe_band"] == p["outside_safe_band"]
