"""The Overview's leftover throttles leave out a reassignment's own throttle while it
moves (the demo's kafka-reassign-partitions --throttle move was listed as 68 leftovers):
it is shown apart and the clear button does not propose it; rates carry their unit."""

from __future__ import annotations

import pytest
from werkzeug.security import generate_password_hash

from backend.twin.cluster import TwinCluster
from backend.twin.gateway import TwinGateway
from backend.twin.generate import generate_snapshot
from dashboard.config import parse_config
from tests.plan_helpers import moves
from tests.unit.test_plan_view import as_user, page, text_of

RATE = "leader.replication.throttled.rate"
LIST = "leader.replication.throttled.replicas"


def _app(tmp, left_behind: bool):
    """A cluster whose topic-0 partition 0 moves to broker 4 under its own throttles;
    ``left_behind``: topic-1 keeps a throttle nothing moves."""
    from dashboard.app import create_app

    twin = TwinCluster(generate_snapshot(4, 2, 3, 12, 3, seed=3, cluster="demo"))
    twin.alter_configs("topic", "topic-0", {LIST: "0:1,0:2,0:3"})  # the move's own
    twin.alter_configs("broker", "4", {RATE: "1000000"})  # the move's destination
    twin.alter_reassignments(moves(("topic-0", 0, [4, 2, 3])))
    if left_behind:
        twin.alter_configs("topic", "topic-1", {LIST: "0:1"})  # left behind
    return create_app(parse_config({
        "clusters": [{"name": "demo", "gateway": {"type": "twin", "url": "http://127.0.0.1:9"}}],
        "cache": {"background_dir": str(tmp / "cache")},
        "store": {"url": f"sqlite:///{tmp / 'railyard.db'}"},
        "auth": {"secret_key_file": str(tmp / "key"), "users": [
            {"name": "ines", "role": "admin", "password_hash": generate_password_hash("x")}]}}),
        gateways={"demo": TwinGateway(twin)})


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    return _app(tmp_path_factory.mktemp("in-flight"), left_behind=True)


def leftovers_as_ines(app) -> tuple:
    """The Overview's leftover-throttles section as the admin sees it: (shown, rows,
    hidden)."""
    ctx = as_user(app, "ines")
    try:
        shown, rows, hidden, _ = page("/").show_leftovers({"cluster": "demo", "range": "1h"},
                                                          0, None)
    finally:
        ctx.pop()
    return shown, rows, hidden


def test_a_moves_own_throttle_is_shown_apart_and_not_proposed_for_clearing(app):
    shown, rows, hidden = leftovers_as_ines(app)
    assert [(r["entity_type"], r["name"]) for r in rows] == [("topic", "topic-1")]
    assert not hidden
    words = text_of(shown)
    assert "1 replication throttle configs are set" in words
    assert "2 throttle configs slow a reassignment in flight that Railyard did not start" \
        in words
    assert "broker 4" in words and "topic topic-0" in words


def test_a_rate_shows_its_unit_beside_the_value_kafka_holds():
    from components.leftovers import shown_value

    assert shown_value(RATE, "1000000") == "1000000 (1 MB/s)"
    assert shown_value("follower.replication.throttled.rate", "2500") == "2500 (2.5 kB/s)"
    assert shown_value(LIST, "0:1,0:2") == "0:1,0:2"


@pytest.fixture(scope="module")
def in_flight_only(tmp_path_factory):
    """The demo at its start: a move's own throttles and nothing left behind."""
    return _app(tmp_path_factory.mktemp("in-flight-only"), left_behind=False)


def test_only_a_moves_own_throttles_are_not_introduced_as_no_throttle(in_flight_only):
    """At the demo's start the section read "No replication throttle is left on a broker
    or topic now." over a 68-row table of throttles: its first line now says there is no
    leftover and whose the configs below are."""
    shown, rows, hidden = leftovers_as_ines(in_flight_only)
    assert rows is None and hidden
    words = text_of(shown)
    assert words.startswith("No leftover throttle: the 2 throttle configs below belong to a "
                            "reassignment in flight that Railyard did not start")
    assert "No replication throttle is left" not in words
    assert "broker 4" in words and "topic topic-0" in words
